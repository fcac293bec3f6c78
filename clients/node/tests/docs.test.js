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

const { jsBlocks, DRIVER } = require('./helpers/docs');

const BLOCKS = [
  ...jsBlocks('docs/clients.md', '<!-- node section below -->'),
  ...jsBlocks('README.md', '## From your framework', '\n## '),
];

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
