'use strict';
// A server that changes under a running app: restarted on the same port with
// the other edition, or with neither and then one again. The app (Express,
// with express-rate-limit on RlStore and a route on RateLimiterRl) is never
// restarted: the first answer that the remembered edition is gone makes the
// adapter find the edition again, once, and send the call again. With
// neither, each hit fails as the framework's own store errors do (a 500, or
// let through with passOnStoreError; rate-limiter-flexible rejects), and a
// warning says once, not per hit, what to load and how.
const test = require('node:test');
const assert = require('node:assert/strict');
const { rateLimit } = require('express-rate-limit');
const { RateLimiterRl, RlStore, RlNotLoadedError } = require('rl-stores');
const servers = require('./helpers/servers');

const KINDS = { module: 'valkey9-module', library: 'valkey9', neither: 'valkey9-bare' };
const NAMES = { module: 'module', library: 'functions' };
const quiet = { error: () => {}, warn: () => {}, info: () => {} };
const sleep = (ms) => new Promise((res) => setTimeout(res, ms));

// Clients as apps make them: they reconnect, and queue calls meanwhile.
async function clients(url) {
  const Redis = require('ioredis');
  const ioredis = new Redis(url, { lazyConnect: true });
  ioredis.on('error', () => {});
  await ioredis.connect();
  const { createClient } = require('redis5');
  const nodeRedis = createClient({ url });
  nodeRedis.on('error', () => {});
  await nodeRedis.connect();
  return {
    ioredis,
    nodeRedis,
    // Both connected again to whatever now listens on the port.
    async reconnected() {
      for (const ping of [() => ioredis.ping(), () => nodeRedis.ping()]) {
        for (let i = 0; ; i++) {
          try {
            await ping();
            break;
          } catch (err) {
            if (i > 200) throw err;
            await sleep(50);
          }
        }
      }
    },
    async close() {
      ioredis.disconnect();
      await nodeRedis.destroy();
    },
  };
}

async function app(c) {
  const sendCommand = (...args) => c.nodeRedis.sendCommand(args);
  const store = new RlStore({ sendCommand, prefix: 'rl:erl:strict:' });
  const passing = new RlStore({ sendCommand, prefix: 'rl:erl:pass:' });
  const flexible = new RateLimiterRl({ storeClient: c.ioredis, points: 3, duration: 60 });
  const express = require('express5');
  const a = express();
  a.get('/erl', rateLimit({ windowMs: 60000, limit: 3, store, logger: quiet }), (req, res) => res.send('ok'));
  a.get('/pass', rateLimit({ windowMs: 60000, limit: 3, store: passing, passOnStoreError: true, logger: quiet }), (req, res) =>
    res.send('ok')
  );
  a.get('/flx', (req, res) =>
    flexible.consume(req.ip).then(
      () => res.send('ok'),
      (r) => (r instanceof Error ? res.status(500).send(r.constructor.name) : res.status(429).send('slow down'))
    )
  );
  a.use((err, req, res, next) => res.status(500).send(err.constructor.name));
  const http = await new Promise((resolve) => {
    const s = a.listen(0, '127.0.0.1', () => resolve(s));
  });
  const base = `http://127.0.0.1:${http.address().port}`;
  return {
    store,
    flexible,
    async statuses(path, n) {
      const out = [];
      for (let i = 0; i < n; i++) {
        const res = await fetch(base + path);
        out.push(res.status === 500 ? `500 ${await res.text()}` : res.status);
      }
      return out;
    },
    close: () => new Promise((resolve) => http.close(resolve)),
  };
}

function warnings() {
  const seen = [];
  const listen = (w) => {
    if (w.code === 'RL_NOT_LOADED') seen.push(w.message);
  };
  process.on('warning', listen);
  return { seen, stop: () => process.off('warning', listen) };
}

const SEQUENCES = [
  ['module', 'library', 'module'],
  ['module', 'neither', 'library'],
  ['library', 'neither', 'module'],
];

for (const sequence of SEQUENCES) {
  test(`a running app follows its server: ${sequence.join(' -> ')}`, async () => {
    let server = await servers.start(KINDS[sequence[0]]);
    const c = await clients(server.url);
    const served = await app(c);
    const told = warnings();
    try {
      for (const [step, edition] of sequence.entries()) {
        if (step > 0) {
          server = await servers.restartAs(server, KINDS[edition]);
          await c.reconnected();
        }
        told.seen.length = 0;
        if (edition === 'neither') {
          // Each hit fails as the frameworks fail on their own stores' errors.
          assert.deepEqual(await served.statuses('/erl', 3), Array(3).fill('500 RlNotLoadedError'));
          assert.deepEqual(await served.statuses('/pass', 3), [200, 200, 200]);
          assert.deepEqual(await served.statuses('/flx', 3), Array(3).fill('500 RlNotLoadedError'));
          await assert.rejects(served.store.ready(), RlNotLoadedError);
          // Once per client or store (each found it gone), not per hit.
          assert.equal(told.seen.length, 3, told.seen.join('\n'));
          for (const text of told.seen) {
            assert.match(text, /loadmodule .*redis-cli -x FUNCTION LOAD REPLACE < rl-\d+\.\d+\.\d+\.lua.*functions\/rl\.lua.*make load-functions/s);
          }
          assert.deepEqual(await server.call('KEYS', '*'), []);
        } else {
          // A fresh server: fresh limits, counted by rl in the edition it has now.
          assert.deepEqual(await served.statuses('/erl', 4), [200, 200, 200, 429]);
          assert.deepEqual(await served.statuses('/flx', 4), [200, 200, 200, 429]);
          assert.equal(await served.store.ready(), NAMES[edition]);
          assert.equal(await served.flexible.ready(), NAMES[edition]);
          assert.equal(await server.call('ZCARD', 'rl:flx:127.0.0.1'), 3);
          assert.equal(await server.call('TYPE', 'rl:erl:strict:127.0.0.1'), 'hash');
          assert.deepEqual(told.seen, []);
        }
      }
    } finally {
      told.stop();
      await served.close();
      await c.close();
      await server.stop();
    }
  });
}

// Calls counted by the server (INFO commandstats): a burst of first calls
// shares one probe.
async function calls(server, name) {
  const info = await server.call('INFO', 'commandstats');
  const m = info.match(new RegExp(`^cmdstat_${name.replace('.', '\\.')}:calls=(\\d+)`, 'm'));
  return m ? Number(m[1]) : 0;
}

test('a burst of first calls on a library-only server sends one probe per client and store', async () => {
  const server = await servers.start('valkey9');
  const c = await clients(server.url);
  try {
    const flexible = new RateLimiterRl({ storeClient: c.ioredis, points: 100, duration: 60 });
    const store = new RlStore({ sendCommand: (...args) => c.nodeRedis.sendCommand(args) });
    store.init({ windowMs: 60000 }).catch(() => {});
    const hits = [];
    for (let i = 0; i < 20; i++) {
      hits.push(flexible.consume(`u${i}`));
      hits.push(store.increment(`ip${i}`));
    }
    await Promise.all(hits);
    assert.equal(await calls(server, 'fcall_ro'), 2, 'FCALL_RO rl_version: one for the client, one for the store');
    assert.equal(await calls(server, 'fcall'), 40);
  } finally {
    await c.close();
    await server.stop();
  }
});

test('a burst that meets the other edition finds it again once, and every call is sent again', async () => {
  let server = await servers.start('valkey9-module');
  const c = await clients(server.url);
  try {
    const flexible = new RateLimiterRl({ storeClient: c.ioredis, points: 100, duration: 60 });
    assert.equal(await flexible.ready(), 'module');
    server = await servers.restartAs(server, 'valkey9');
    await c.reconnected();
    const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => flexible.consume(`u${i}`)));
    assert.deepEqual(burst.map((r) => r.remainingPoints), Array(20).fill(99));
    assert.equal(await calls(server, 'fcall_ro'), 1);
    assert.equal(await calls(server, 'fcall'), 20);
    server = await servers.restartAs(server, 'valkey9-module');
    await c.reconnected();
    await Promise.all(Array.from({ length: 20 }, (_, i) => flexible.consume(`u${i}`)));
    // The library's function unknown, then one RL.PEEK probe finds the module.
    assert.equal(await calls(server, 'rl.peek'), 1);
    assert.equal(await calls(server, 'rl.slide'), 20);
  } finally {
    await c.close();
    await server.stop();
  }
});
