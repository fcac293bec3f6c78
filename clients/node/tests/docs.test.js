'use strict';
// Every ```js set-up in docs/clients.md's Node section and in README.md's
// "From your framework" section runs, as an ES module, on Redis 7.0 with the
// module and on Valkey 9.1 with only the library, and is then driven past
// its limit: a `limiter` must admit exactly its points, an `app` pass
// exactly its `limit:` requests, then reject / answer 429.
const fs = require('fs');
const path = require('path');
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('child_process');
const servers = require('./helpers/servers');

const DEPS = path.resolve(__dirname, '..', '.test');

function jsBlocks(file, from, to) {
  const text = fs.readFileSync(path.join(servers.ROOT, file), 'utf8');
  const start = text.indexOf(from);
  assert.ok(start >= 0, `${file} has no "${from}"`);
  const end = to ? text.indexOf(to, start + from.length) : -1;
  const section = text.slice(start, end < 0 ? undefined : end);
  const before = text.slice(0, start).split('\n').length;
  const blocks = [];
  const re = /^```js\n([\s\S]*?)^```$/gm;
  let m;
  while ((m = re.exec(section))) {
    blocks.push({ where: `${file}:${before + section.slice(0, m.index).split('\n').length - 1}`, code: m[1] });
  }
  return blocks;
}

const BLOCKS = [
  ...jsBlocks('docs/clients.md', '<!-- node section below -->'),
  ...jsBlocks('README.md', '## From your framework', '\n## '),
];

// Runs after the snippet, in its module: drives what it set up.
const DRIVER = `
;{
  const { RateLimiterRes } = await import('rate-limiter-flexible');
  let checked = 0;
  if (typeof limiter !== 'undefined') {
    let admitted = 0;
    for (let i = 0; i <= limiter.points; i++) {
      try { await limiter.consume('docs-user'); admitted++; }
      catch (e) { if (!(e instanceof RateLimiterRes)) throw e; }
    }
    if (admitted !== limiter.points) throw new Error('limiter admitted ' + admitted + ' of ' + limiter.points);
    checked++;
  }
  if (typeof app !== 'undefined') {
    const limit = Number(process.env.DOCS_LIMIT);
    const server = await new Promise((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)); });
    const codes = [];
    for (let i = 0; i <= limit; i++) {
      const res = await fetch('http://127.0.0.1:' + server.address().port + '/');
      await res.text();
      codes.push(res.status);
    }
    server.close();
    const passed = codes.filter((c) => c !== 429).length;
    if (passed !== limit || codes[limit] !== 429) throw new Error('app: ' + passed + ' of ' + limit + ' passed, then ' + codes[limit]);
    checked++;
  }
  if (checked === 0) throw new Error('the snippet set up neither a limiter nor an app');
  process.exit(0);
}
`;

test.describe('the docs\' Node set-ups', () => {
  const started = {};
  test.before(async () => {
    for (const kind of ['redis7', 'valkey9']) started[kind] = await servers.start(kind);
  });
  test.after(async () => {
    for (const s of Object.values(started)) await s.stop();
  });

  test('there are set-ups to run in both files', () => {
    assert.ok(BLOCKS.filter((b) => b.where.startsWith('docs/')).length >= 4, BLOCKS.map((b) => b.where).join(', '));
    assert.ok(BLOCKS.filter((b) => b.where.startsWith('README')).length >= 2, BLOCKS.map((b) => b.where).join(', '));
  });

  for (const block of BLOCKS) {
    for (const kind of ['redis7', 'valkey9']) {
      test(`${block.where} on ${kind}`, async () => {
        // Each set-up starts on an empty keyspace (the snippets share key names).
        await started[kind].call('FLUSHALL');
        // The file sits in .test/ so its imports find the installed packages.
        const file = path.join(DEPS, `docs-snippet-${process.pid}.mjs`);
        fs.writeFileSync(file, block.code + DRIVER);
        const limit = (block.code.match(/\blimit: (\d+)/) || [])[1] || '';
        try {
          const run = spawnSync(process.execPath, [file], {
            env: { ...process.env, REDIS_URL: started[kind].url, DOCS_LIMIT: limit },
            encoding: 'utf8',
            timeout: 60000,
          });
          assert.equal(run.status, 0, `${block.where}: ${run.stdout}${run.stderr}`);
        } finally {
          fs.rmSync(file, { force: true });
        }
      });
    }
  }
});
