'use strict';
// An application as docs/clients.md makes it: a folder of its own,
// `npm init -y`, the install lines as written (the package from a checkout,
// the frameworks and node-redis from npm, whichever major is current), the
// Node section's set-ups that use only what those lines install, saved as
// ES modules and started from another directory (`cd / && node
// /app/app.mjs`), without NODE_PATH. The package must find the
// application's rate-limiter-flexible from there (require.main is unset in
// an ES module, and the working directory is not the app's), installed as
// the docs say and installed from the packed tarball.
const fs = require('fs');
const os = require('os');
const path = require('path');
const test = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync, spawnSync } = require('child_process');
const servers = require('./helpers/servers');
const { jsBlocks, shellLines, DRIVER } = require('./helpers/docs');

const DEPS = path.resolve(__dirname, '..', '.test');
const DOCS = 'docs/clients.md';
const INSTALL = shellLines(DOCS, "In your application's folder");
// The packages an `npm install` line names (not its paths or flags).
const INSTALLED = new Set(INSTALL.filter((l) => l.startsWith('npm install '))
  .flatMap((l) => l.split(/\s+/).slice(2)).filter((w) => !w.startsWith('-') && !w.includes('/')));
// The packages a set-up's import statements name ('@scope/name' or 'name';
// not a `// was: from '...'` comment).
const imports = (code) => [...code.matchAll(/^import [^;]*?from '([^']+)'/gm)]
  .map((m) => m[1].split('/').slice(0, m[1].startsWith('@') ? 2 : 1).join('/'));
// The set-ups with another client (ioredis) are run by docs.test.js, with every client installed.
const SETUPS = jsBlocks(DOCS, '<!-- node section below -->', '<!-- go section below -->')
  .filter((b) => imports(b.code).every((name) => name === 'rl-stores' || INSTALLED.has(name)));

function sh(line, cwd) {
  const env = { ...process.env };
  delete env.NODE_PATH;
  return execFileSync('bash', ['-c', line], { cwd, env, encoding: 'utf8', stdio: 'pipe' });
}

function runFromRoot(file, url, limit) {
  const env = { ...process.env, REDIS_URL: url, DOCS_LIMIT: limit };
  delete env.NODE_PATH;
  return spawnSync(process.execPath, [file], { cwd: '/', env, encoding: 'utf8', timeout: 60000 });
}

test.describe('an app in its own folder, started from another directory', () => {
  let server;
  let tmp;
  test.before(async () => {
    server = await servers.start('redis7');
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-stores-app-'));
  });
  test.after(async () => {
    if (server) await server.stop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('the install lines name the module type and the app\'s own folder; set-ups of both adapters use them', () => {
    assert.ok(INSTALL.includes('npm init -y'), INSTALL.join('\n'));
    assert.ok(INSTALL.includes('npm pkg set type=module'), INSTALL.join('\n'));
    assert.ok(INSTALL.some((l) => l.startsWith('npm install /path/to/rl/clients/node ')), INSTALL.join('\n'));
    assert.ok(SETUPS.some((b) => b.code.includes('new RateLimiterRl(')), SETUPS.map((b) => b.where).join(', '));
    assert.ok(SETUPS.some((b) => /new (RedisStore|RlStore)\(/.test(b.code)), SETUPS.map((b) => b.where).join(', '));
  });

  for (const how of ['as the docs say', 'from the packed tarball']) {
    test(`installed ${how}, each set-up runs as an ES module from /`, async () => {
      const app = path.join(tmp, how.replace(/\W+/g, '-'));
      fs.mkdirSync(app);
      for (let line of INSTALL) {
        line = line.replace('/path/to/rl', servers.ROOT);
        if (how !== 'as the docs say') {
          const tarball = fs.readdirSync(DEPS).find((f) => /^rl-stores-.*\.tgz$/.test(f));
          line = line.replace(path.join(servers.ROOT, 'clients', 'node'), path.join(DEPS, tarball));
        }
        // --prefer-offline: the run script fetched the same packages moments ago.
        sh(line.startsWith('npm install ') ? `${line} --prefer-offline --no-audit --no-fund --loglevel=error` : line, app);
      }
      assert.equal(JSON.parse(fs.readFileSync(path.join(app, 'package.json'), 'utf8')).type, 'module');
      const linked = fs.lstatSync(path.join(app, 'node_modules', 'rl-stores')).isSymbolicLink();
      assert.equal(linked, how === 'as the docs say');
      // `npm install redis` gives node-redis 6 now: the set-ups run on it.
      const redis = JSON.parse(fs.readFileSync(path.join(app, 'node_modules', 'redis', 'package.json'), 'utf8'));
      console.log(`# ${how}: node-redis ${redis.version}`);
      for (const block of SETUPS) {
        await server.call('FLUSHALL');
        const file = path.join(app, 'app.mjs');
        fs.writeFileSync(file, block.code + DRIVER);
        const limit = (block.code.match(/\blimit: (\d+)/) || [])[1] || '';
        const run = runFromRoot(file, server.url, limit);
        assert.equal(run.status, 0, `${block.where}: ${run.stdout}${run.stderr}`);
      }
    });
  }
});
