'use strict';
// Which edition the adapters use: the module where it is loaded, the
// library where only it is, the library loaded by the adapter when allowed,
// else an error at start saying how to load one. Found once per client.
const fs = require('fs');
const test = require('node:test');
const assert = require('node:assert/strict');
const { RateLimiterRes } = require('rate-limiter-flexible');
const { RateLimiterRl, RlStore, RlNotLoadedError } = require('rl-stores');
const servers = require('./helpers/servers');
const { connect } = require('./helpers/clients');

// What a release user has (the release's rl-<version>.lua) and what a checkout has.
const VERSION = require('rl-stores/package.json').version;
const HOW_TO = new RegExp(
  `loadmodule .*redis-cli -x FUNCTION LOAD REPLACE < rl-${VERSION.replace(/\./g, '\\.')}\\.lua.*functions/rl\\.lua.*make load-functions.*loadFunctions: true`,
  's'
);

async function withServer(kind, client, body) {
  const server = await servers.start(kind);
  const conn = await connect(client, server.url);
  try {
    await body(server, conn);
  } finally {
    await conn.close();
    await server.stop();
  }
}

test('a server with the module and the library: the module is used', async () => {
  await withServer('redis7', 'ioredis', async (server, conn) => {
    await server.call('FUNCTION', 'LOAD', fs.readFileSync(servers.LIBRARY, 'utf8'));
    const limiter = new RateLimiterRl({ storeClient: conn.client, points: 3, duration: 60 });
    assert.equal(await limiter.ready(), 'module');
    const m = await server.monitor();
    await limiter.consume('user');
    const seen = await m.settle();
    m.close();
    assert.deepEqual(seen.map((l) => l.split(' ')[0]), ['"RL.SLIDE"']);
  });
});

for (const client of ['redis5', 'ioredis']) {
  test(`${client}: a server with neither edition fails at start, saying how to load one, and loads nothing`, async () => {
    await withServer('valkey9-bare', client, async (server, conn) => {
      const limiter = new RateLimiterRl({ storeClient: conn.client, points: 3, duration: 60 });
      await assert.rejects(limiter.ready(), (e) => e instanceof RlNotLoadedError && HOW_TO.test(e.message));
      // A hit fails the same way: an Error, never an admission nor a RateLimiterRes.
      await assert.rejects(limiter.consume('user'), (e) => e instanceof RlNotLoadedError && !(e instanceof RateLimiterRes));
      const store = new RlStore({ sendCommand: conn.sendCommand });
      await assert.rejects(store.init({ windowMs: 1000 }), (e) => e instanceof RlNotLoadedError && HOW_TO.test(e.message));
      await assert.rejects(store.increment('ip'), RlNotLoadedError);
      assert.deepEqual(await server.call('FUNCTION', 'LIST'), []);
      assert.deepEqual(await server.call('KEYS', '*'), []);
    });
  });

  test(`${client}: loadFunctions: true loads the packaged library, which then answers`, async () => {
    await withServer('valkey9-bare', client, async (server, conn) => {
      const limiter = new RateLimiterRl({ storeClient: conn.client, points: 2, duration: 60, loadFunctions: true });
      assert.equal(await limiter.ready(), 'functions');
      const [[, name, , , , , , code]] = await server.call('FUNCTION', 'LIST', 'WITHCODE');
      assert.equal(name, 'rl');
      assert.equal(code, fs.readFileSync(servers.LIBRARY, 'utf8'));
      assert.equal((await limiter.consume('user')).remainingPoints, 1);
      assert.equal(await server.call('ZCARD', 'rl:flx:user'), 1);
    });
  });
}

test('a store loads the library too when allowed, and a later store on a loaded server finds it', async () => {
  await withServer('valkey9-bare', 'redis4', async (server, conn) => {
    const loading = new RlStore({ sendCommand: conn.sendCommand, loadFunctions: true });
    await loading.init({ windowMs: 60000 });
    assert.equal(await loading.ready(), 'functions');
    const plain = new RlStore({ sendCommand: conn.sendCommand });
    await plain.init({ windowMs: 60000 });
    assert.equal(await plain.ready(), 'functions');
    assert.equal((await plain.increment('ip')).totalHits, 1);
  });
});

test('the edition is found once per client, not per hit', async () => {
  await withServer('valkey9', 'redis5', async (server, conn) => {
    const m = await server.monitor();
    const a = new RateLimiterRl({ storeClient: conn.client, points: 100, duration: 60, keyPrefix: 'a' });
    const b = new RateLimiterRl({ storeClient: conn.client, points: 100, duration: 60, keyPrefix: 'b', limiter: 'buckets' });
    for (let i = 0; i < 5; i++) {
      await a.consume('user');
      await b.consume('user');
    }
    const seen = await m.settle();
    m.close();
    // The module's probe (RL.PEEK) is an unknown command here, which
    // MONITOR does not show; then the library's.
    const probes = seen.filter((l) => /^"RL.PEEK"|^"FCALL_RO" "rl_version"/i.test(l));
    assert.deepEqual(probes.map((l) => l.split(' ').slice(0, 3).join(' ')), ['"FCALL_RO" "rl_version" "0"']);
    assert.equal(seen.length - probes.length, 10);
  });
});

test('a server that comes up after the first hit failed is probed again', async () => {
  await withServer('valkey9-bare', 'ioredis', async (server, conn) => {
    const limiter = new RateLimiterRl({ storeClient: conn.client, points: 2, duration: 60 });
    await assert.rejects(limiter.consume('user'), RlNotLoadedError);
    await server.call('FUNCTION', 'LOAD', fs.readFileSync(servers.LIBRARY, 'utf8'));
    assert.equal((await limiter.consume('user')).remainingPoints, 1);
  });
});
