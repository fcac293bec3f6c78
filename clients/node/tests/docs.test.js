'use strict';
// Every ```js set-up in docs/clients.md's Node section and in the package's
// README runs, as an ES module, on Redis 7.0 with the module and on Valkey
// 9.1 with only the library, and is then driven past its limit: a `limiter`
// must admit exactly its points, an `app` pass exactly its `limit:`
// requests, then reject / answer 429. README.md's "From your framework"
// shows the one-line switches: each of its Node lines must be a line of
// one of docs/clients.md's set-ups.
const fs = require('fs');
const path = require('path');
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('child_process');
const servers = require('./helpers/servers');

const DEPS = path.resolve(__dirname, '..', '.test');

const { jsBlocks, DRIVER } = require('./helpers/docs');

const DOCS = jsBlocks('docs/clients.md', '<!-- node section below -->', '<!-- go section below -->');
const PACKAGE = jsBlocks('clients/node/README.md', '# ');
const BLOCKS = [...DOCS, ...PACKAGE];
const SWITCHES = jsBlocks('README.md', '## From your framework', '\n## ');

test.describe('the docs\' Node set-ups', () => {
  const started = {};
  test.before(async () => {
    for (const kind of ['redis7', 'valkey9']) started[kind] = await servers.start(kind);
  });
  test.after(async () => {
    for (const s of Object.values(started)) await s.stop();
  });

  test('there are set-ups to run in both files', () => {
    assert.ok(DOCS.length >= 4, DOCS.map((b) => b.where).join(', '));
    assert.ok(PACKAGE.length >= 2, PACKAGE.map((b) => b.where).join(', '));
  });

  test('each of the README\'s Node lines is a line of a set-up run here', () => {
    const lines = SWITCHES.flatMap((b) => b.code.split('\n')).map((l) => l.split(' // ')[0].trim()).filter(Boolean);
    assert.ok(lines.length >= 2, `README.md's From your framework: ${lines.length} Node lines`);
    for (const line of lines) {
      assert.ok(DOCS.some((b) => b.code.split('\n').some((l) => l.trim().startsWith(line))),
        `README.md's Node line \`${line}\` is in no set-up of docs/clients.md`);
    }
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
