'use strict';
// docs/clients.md's "ioredis while the server is down" set-up, run as
// written (an Express app in its own process, on Redis 7.0 with the
// module), with ioredis 6 and 5: once the server is stopped, every request
// is answered within a bound (let through with passOnStoreError, 500
// without), where ioredis's defaults leave it unanswered; a paused server
// answers after commandTimeout, and the limit holds again once it resumes.
const fs = require('fs');
const path = require('path');
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('child_process');
const servers = require('./helpers/servers');
const { jsBlocks } = require('./helpers/docs');

const DEPS = path.resolve(__dirname, '..', '.test');
const HEADING = '### ioredis while the server is down';
const [SETUP] = jsBlocks('docs/clients.md', HEADING, '\n### ');
// The bound a request must be answered within once the server is gone
// (commandTimeout 1000 plus the process's own latency on a busy machine).
const PROMPT_MS = 1500;
// What ioredis's defaults leave unanswered for at least this long (they
// answer after about 10 s).
const HANG_MS = 2500;

// The set-up's options object, and the app listening on a free port.
const OPTIONS = /new Redis\(process\.env\.REDIS_URL, \{[\s\S]*?\n\}\);/;
const LISTEN = `
;{
  app.get('/', (req, res) => res.send('ok'));
  const server = await new Promise((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)); });
  process.stdout.write('port ' + server.address().port + '\\n');
}
`;

// The set-up with `change` applied, started against `url`: its base URL.
async function startApp(code, url, t) {
  const file = path.join(DEPS, `ioredis-app-${process.pid}-${Math.random().toString(36).slice(2)}.mjs`);
  fs.writeFileSync(file, code + LISTEN);
  const child = spawn(process.execPath, [file], { env: { ...process.env, REDIS_URL: url }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  t.after(() => {
    child.kill('SIGKILL');
    fs.rmSync(file, { force: true });
  });
  const port = await new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/port (\d+)\n/);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`the app exited ${code}: ${out}${err}`)));
  });
  return `http://127.0.0.1:${port}/`;
}

// One request: its status and how long it took, or 'none' after `within` ms.
async function request(base, within) {
  const t0 = Date.now();
  try {
    const res = await fetch(base, { signal: AbortSignal.timeout(within) });
    await res.text();
    return { status: res.status, ms: Date.now() - t0 };
  } catch (err) {
    if (err.name !== 'TimeoutError') throw err;
    return { status: 'none', ms: Date.now() - t0 };
  }
}

test('the docs hold the set-up, with the settings it explains', () => {
  assert.ok(SETUP, `docs/clients.md has no js block after "${HEADING}"`);
  for (const setting of ['enableOfflineQueue: false', 'maxRetriesPerRequest: 1', 'commandTimeout:', 'connectTimeout:', 'passOnStoreError: true', "from 'ioredis'"]) {
    assert.ok(SETUP.code.includes(setting), `the set-up lacks ${setting}`);
  }
  assert.match(SETUP.code, OPTIONS);
  assert.doesNotMatch(withoutPassing(SETUP.code), /passOnStoreError/);
});

// The set-up as an app that answers 500 on a store error.
const withoutPassing = (code) => code.replace(/\n\s*passOnStoreError: true,[^\n]*/, '');

for (const ioredis of ['ioredis', 'ioredis5']) {
  const written = SETUP.code.replace("from 'ioredis'", `from '${ioredis}'`);
  const variants = {
    'as written': { code: written, down: 200 },
    'without passOnStoreError': { code: withoutPassing(written), down: 500 },
  };

  test.describe(`${ioredis}: the server stopped`, () => {
    for (const [name, v] of Object.entries(variants)) {
      test(`${name}: each request answered ${v.down} within ${PROMPT_MS} ms`, async (t) => {
        const server = await servers.start('redis7');
        t.after(() => server.stop());
        const base = await startApp(v.code, server.url, t);
        assert.equal((await request(base, 10000)).status, 200);
        await server.stop();
        for (let i = 0; i < 3; i++) {
          const r = await request(base, 5000);
          assert.equal(r.status, v.down, `request ${i} after the stop: ${JSON.stringify(r)}`);
          assert.ok(r.ms < PROMPT_MS, `request ${i} after the stop took ${r.ms} ms`);
        }
      });
    }

    test(`with ioredis's defaults, requests wait (${HANG_MS} ms unanswered), passOnStoreError or not`, async (t) => {
      const server = await servers.start('redis7');
      t.after(() => server.stop());
      const defaults = (code) => code.replace(OPTIONS, 'new Redis(process.env.REDIS_URL);');
      const open = await startApp(defaults(variants['as written'].code), server.url, t);
      const strict = await startApp(defaults(variants['without passOnStoreError'].code), server.url, t);
      assert.equal((await request(open, 10000)).status, 200);
      assert.equal((await request(strict, 10000)).status, 200);
      await server.stop();
      const [a, b] = await Promise.all([request(open, HANG_MS), request(strict, HANG_MS)]);
      assert.equal(a.status, 'none', `with passOnStoreError: ${JSON.stringify(a)}`);
      assert.equal(b.status, 'none', `without: ${JSON.stringify(b)}`);
    });
  });

  test(`${ioredis}: a paused server answers after commandTimeout, then the limit holds again`, async (t) => {
    const server = await servers.start('redis7');
    t.after(() => server.stop());
    const base = await startApp(variants['without passOnStoreError'].code, server.url, t);
    assert.equal((await request(base, 10000)).status, 200);
    await server.call('CLIENT', 'PAUSE', 2500, 'ALL');
    const r = await request(base, 5000);
    assert.equal(r.status, 500, JSON.stringify(r));
    assert.ok(r.ms >= 900 && r.ms < 1000 + PROMPT_MS, `answered after ${r.ms} ms (commandTimeout 1000)`);
    // Resumed (CLIENT PAUSE ends by itself): the window counts on, to its limit of 20.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const after = [];
    for (let i = 0; i < 20; i++) after.push((await request(base, 10000)).status);
    const passed = after.filter((s) => s === 200).length;
    assert.ok(passed >= 18 && passed <= 19 && after[after.length - 1] === 429, `after the pause: ${after.join(' ')}`);
  });
}
