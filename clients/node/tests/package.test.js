'use strict';
// The package as npm installs it: the library it ships is functions/rl.lua
// byte for byte, a linked install (`npm install ./clients/node`) finds the
// application's rate-limiter-flexible, and the types compile against the
// frameworks' own.
const fs = require('fs');
const os = require('os');
const path = require('path');
const test = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync, spawnSync } = require('child_process');
const servers = require('./helpers/servers');

const DEPS = path.resolve(__dirname, '..', '.test');
const PACKAGE = path.resolve(__dirname, '..');

test('the packed package ships functions/rl.lua unchanged, and loads that copy', () => {
  const installed = path.dirname(require.resolve('rl-stores/package.json'));
  assert.ok(installed.startsWith(DEPS), `rl-stores is the packed install, found at ${installed}`);
  const shipped = path.join(installed, 'rl.lua');
  assert.ok(fs.existsSync(shipped), 'the tarball holds rl.lua');
  assert.equal(fs.readFileSync(shipped, 'utf8'), fs.readFileSync(servers.LIBRARY, 'utf8'));
  assert.equal(require('rl-stores').libraryPath(), shipped);
});

test('a linked install uses the application\'s rate-limiter-flexible and the checkout\'s functions/rl.lua', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-stores-'));
  const app = path.join(tmp, 'app');
  try {
    // A checkout: functions/rl.lua, and clients/node with a stale rl.lua
    // that an earlier `npm pack` left beside package.json.
    const checkout = path.join(tmp, 'checkout');
    const pkg = path.join(checkout, 'clients', 'node');
    fs.mkdirSync(path.join(checkout, 'functions'), { recursive: true });
    fs.copyFileSync(servers.LIBRARY, path.join(checkout, 'functions', 'rl.lua'));
    fs.mkdirSync(pkg, { recursive: true });
    for (const f of ['package.json', 'index.js', 'index.d.ts']) fs.copyFileSync(path.join(PACKAGE, f), path.join(pkg, f));
    fs.cpSync(path.join(PACKAGE, 'lib'), path.join(pkg, 'lib'), { recursive: true });
    fs.writeFileSync(path.join(pkg, 'rl.lua'), '#!lua name=rl\n-- an older library\n');
    fs.mkdirSync(app);
    fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', private: true }));
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--no-package-lock', '--loglevel=error', pkg], { cwd: app, stdio: 'pipe' });
    assert.ok(fs.lstatSync(path.join(app, 'node_modules', 'rl-stores')).isSymbolicLink(), 'npm links a folder');
    // The application's own copy of rate-limiter-flexible (not on NODE_PATH).
    fs.symlinkSync(path.join(DEPS, 'node_modules', 'rate-limiter-flexible'), path.join(app, 'node_modules', 'rate-limiter-flexible'));
    const script = `
      const assert = require('assert');
      const Store = require('rate-limiter-flexible/lib/RateLimiterStoreAbstract');
      const { RateLimiterRl, libraryPath } = require('rl-stores');
      const limiter = new RateLimiterRl({ storeClient: { sendCommand() {} }, points: 1, duration: 1 });
      assert.ok(limiter instanceof Store);
      process.stdout.write(libraryPath());
    `;
    const env = { ...process.env };
    delete env.NODE_PATH;
    const run = spawnSync(process.execPath, ['-e', script], { cwd: app, env, encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(fs.readFileSync(run.stdout, 'utf8'), fs.readFileSync(servers.LIBRARY, 'utf8'));
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

const USAGE = `
import { RateLimiterRl, RlStore, RedisStore } from 'rl-stores';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { rateLimit } from 'express-rate-limit';
import { createClient } from 'redis5';
import Redis from 'ioredis';

const client = createClient();
const limiter = new RateLimiterRl({
  storeClient: client, points: 10, duration: 1, blockDuration: 5, limiter: 'buckets',
  insuranceLimiter: new RateLimiterMemory({ points: 1, duration: 1 }),
});
export const remaining: Promise<number> = limiter.consume('k', 2).then((r: RateLimiterRes) => r.remainingPoints);
export const edition: Promise<'module' | 'functions'> = limiter.ready();
const io = new Redis();
export const store = new RlStore({ sendCommand: (command: string, ...args: string[]) => io.call(command, ...args) });
export const middleware = rateLimit({ windowMs: 60000, limit: 5, store });
export const other = new RedisStore({ sendCommand: (...args: string[]) => client.sendCommand(args), prefix: 'x:' });
`;

function tsc(source, { skipLibCheck = true } = {}) {
  const dir = fs.mkdtempSync(path.join(DEPS, 'types-'));
  try {
    fs.writeFileSync(path.join(dir, 'usage.ts'), source);
    const bin = path.join(DEPS, 'node_modules', 'typescript', 'bin', 'tsc');
    const args = [bin, '--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--types', 'node', ...(skipLibCheck ? ['--skipLibCheck'] : []), path.join(dir, 'usage.ts')];
    return spawnSync(process.execPath, args, { cwd: DEPS, encoding: 'utf8' });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('the types compile with the frameworks\' and clients\' own', () => {
  const ok = tsc(USAGE);
  assert.equal(ok.status, 0, ok.stdout + ok.stderr);
});

test('the types refuse what the package refuses', () => {
  for (const bad of [
    "new RateLimiterRl({ storeClient: client, points: 10, duration: 1, limiter: 'fixed' });",
    'new RlStore({ prefix: "x:" });',
    "limiter.consume('k').then((r: RateLimiterRes) => r.remaining);",
  ]) {
    const run = tsc(`${USAGE}\n${bad}\n`);
    assert.notEqual(run.status, 0, `tsc accepted: ${bad}`);
    assert.match(run.stdout, /usage\.ts\(\d+,\d+\): error TS/, run.stdout);
  }
});

// docs/clients.md's TypeScript note: ioredis 6's declarations import
// redis-errors, whose types ioredis does not install, so skipLibCheck off
// fails there and only there (ioredis 5's declarations and these types
// compile); @types/redis-errors mends it. Without node-redis, whose
// declarations take tsc long to check.
const IOREDIS_USAGE = `
import { RateLimiterRl, RlStore } from 'rl-stores';
import Redis from 'ioredis';
import Redis5 from 'ioredis5';

const io = new Redis();
export const store = new RlStore({ sendCommand: (command: string, ...args: string[]) => io.call(command, ...args) });
export const limiter = new RateLimiterRl({ storeClient: new Redis5(), points: 3, duration: 1 });
`;

test('ioredis 6 needs skipLibCheck or @types/redis-errors; ioredis 5 and these types compile without', () => {
  const errors = (run) => run.stdout.split('\n').filter((l) => / error TS\d+:/.test(l));
  const bare = tsc(IOREDIS_USAGE, { skipLibCheck: false });
  assert.notEqual(bare.status, 0, 'ioredis 6\'s types compile without skipLibCheck now: update the TypeScript note in docs/clients.md');
  assert.ok(errors(bare).length > 0, bare.stdout + bare.stderr);
  for (const line of errors(bare)) {
    assert.match(line, /^node_modules\/ioredis\/built\/.*error TS7016: Could not find a declaration file for module 'redis-errors'/, bare.stdout);
  }
  // `npm install -D @types/redis-errors`: the run script installs it under
  // another name; linked in as @types/redis-errors for this check only.
  const link = path.join(DEPS, 'node_modules', '@types', 'redis-errors');
  fs.symlinkSync(path.join('..', 'types-redis-errors'), link);
  try {
    const typed = tsc(IOREDIS_USAGE, { skipLibCheck: false });
    assert.equal(typed.status, 0, typed.stdout + typed.stderr);
  } finally {
    fs.unlinkSync(link);
  }
});
