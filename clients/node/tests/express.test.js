'use strict';
// express-rate-limit with RlStore, over HTTP on loopback, in Express 4 and 5,
// on Redis 7.0 with the module and on Valkey 9.1 with only the library.
const test = require('node:test');
const assert = require('node:assert/strict');
const { rateLimit } = require('express-rate-limit');
const { RlStore, RedisStore } = require('rl-stores');
const servers = require('./helpers/servers');
const { CLIENTS, connect, suiteServer } = require('./helpers/clients');

const quiet = { error: () => {}, warn: () => {}, info: () => {} };

// An app on a free loopback port; `routes` adds the handlers after the limiter.
async function serve(expressName, limiter, routes = (app) => app.get('/', (req, res) => res.send('ok'))) {
  const express = require(expressName);
  const app = express();
  app.use(limiter);
  routes(app);
  // Express's default handler answers 500 for a store error: quietly.
  app.use((err, req, res, next) => res.status(500).send(String(err && err.message)));
  const http = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const base = `http://127.0.0.1:${http.address().port}`;
  return {
    get: async (path = '/') => {
      const res = await fetch(base + path);
      await res.text();
      return res;
    },
    close: () => new Promise((resolve) => http.close(resolve)),
  };
}

async function statuses(app, n, path = '/') {
  const out = [];
  for (let i = 0; i < n; i++) out.push((await app.get(path)).status);
  return out;
}

for (const kind of ['redis7', 'valkey9']) {
  test.describe(`express-rate-limit with RlStore on ${kind}`, () => {
    const { server, conns } = suiteServer(kind);

    for (const c of CLIENTS) {
      for (const expressName of ['express4', 'express5']) {
        test(`${c}, ${expressName}: exactly limit requests pass, then 429`, async () => {
          const store = new RlStore({ sendCommand: conns[c].sendCommand, prefix: `http-${c}-${expressName}:` });
          const limiter = rateLimit({ windowMs: 60000, limit: 5, store, standardHeaders: 'draft-7', legacyHeaders: false, logger: quiet });
          const app = await serve(expressName, limiter);
          try {
            const res = await app.get();
            assert.equal(res.status, 200);
            // The reset is the window plus what is left of the current bucket (1 s wide).
            const [, reset] = res.headers.get('ratelimit').match(/^limit=5, remaining=4, reset=(\d+)$/);
            assert.ok(Number(reset) >= 59 && Number(reset) <= 61, `reset=${reset}`);
            assert.deepEqual(await statuses(app, 7), [200, 200, 200, 200, 429, 429, 429]);
          } finally {
            await app.close();
          }
          // Every request was counted, the 429s too (express-rate-limit's contract).
          assert.equal((await store.get('127.0.0.1')).totalHits, 8);
        });
      }
    }

    test('switching from rate-limit-redis is replacing the import: the same options, the same answers', async () => {
      const { RedisStore: TheirStore } = require('rate-limit-redis');
      const answers = {};
      for (const [name, Store] of [['rate-limit-redis', TheirStore], ['rl-stores', RedisStore]]) {
        const options = { sendCommand: conns.redis5.sendCommand, prefix: `switch-${name}:` };
        const limiter = rateLimit({ windowMs: 60000, limit: 3, store: new Store(options), logger: quiet });
        const app = await serve('express5', limiter);
        try {
          answers[name] = await statuses(app, 5);
        } finally {
          await app.close();
        }
      }
      assert.deepEqual(answers['rate-limit-redis'], [200, 200, 200, 429, 429]);
      assert.deepEqual(answers['rl-stores'], answers['rate-limit-redis']);
      // Why rl-stores's default prefix is not rate-limit-redis's "rl:": its
      // keys are strings, which rl refuses until they expire.
      const samePrefix = new RlStore({ sendCommand: conns.redis5.sendCommand, prefix: 'switch-rate-limit-redis:' });
      await samePrefix.init({ windowMs: 60000 });
      await assert.rejects(samePrefix.increment('127.0.0.1'), (e) => /^WRONGTYPE/.test(e.message));
      const theirDefault = new TheirStore({ sendCommand: conns.redis5.sendCommand });
      // (Its constructor loads its scripts: let that finish inside the test.)
      await Promise.all([theirDefault.incrementScriptSha, theirDefault.getScriptSha]);
      assert.notEqual(new RlStore({ sendCommand: conns.redis5.sendCommand }).prefix, theirDefault.prefix);
    });

    test('skipFailedRequests takes failed requests back through decrement (RL.REFUND)', async () => {
      const store = new RlStore({ sendCommand: conns.ioredis.sendCommand, prefix: 'skip:' });
      const limiter = rateLimit({ windowMs: 60000, limit: 2, store, skipFailedRequests: true, logger: quiet });
      const app = await serve('express5', limiter, (a) => {
        a.get('/fail', (req, res) => res.status(500).send('no'));
        a.get('/', (req, res) => res.send('ok'));
      });
      try {
        assert.deepEqual(await statuses(app, 3, '/fail'), [500, 500, 500]);
        // Let the responses' 'finish' handlers run their decrements.
        for (let i = 0; i < 50 && (await store.get('127.0.0.1')).totalHits !== 0; i++) await new Promise((r) => setTimeout(r, 20));
        assert.equal((await store.get('127.0.0.1')).totalHits, 0);
        assert.deepEqual(await statuses(app, 3), [200, 200, 429]);
      } finally {
        await app.close();
      }
    });

    test('resetKey forgets a client', async () => {
      const store = new RlStore({ sendCommand: conns.redis5.sendCommand, prefix: 'reset:' });
      const limiter = rateLimit({ windowMs: 60000, limit: 1, store, logger: quiet });
      const app = await serve('express5', limiter);
      try {
        assert.deepEqual(await statuses(app, 2), [200, 429]);
        limiter.resetKey('127.0.0.1');
        for (let i = 0; i < 50 && (await server.call('EXISTS', 'reset:127.0.0.1')) === 1; i++) await new Promise((r) => setTimeout(r, 20));
        assert.deepEqual(await statuses(app, 2), [200, 429]);
      } finally {
        await app.close();
      }
    });

    test('the store is a sliding count on RL.BUCKETS: increment, get, decrement', async () => {
      const store = new RlStore({ sendCommand: conns.redis4.sendCommand, prefix: 'count:' });
      store.init({ windowMs: 60000 });
      assert.equal(await store.ready(), kind === 'redis7' ? 'module' : 'functions');
      // An empty window: totalHits 0, as rate-limit-redis answers.
      assert.equal((await store.get('k')).totalHits, 0);
      assert.equal((await store.increment('k')).totalHits, 1);
      const second = await store.increment('k');
      assert.equal(second.totalHits, 2);
      assert.ok(second.resetTime instanceof Date);
      assert.ok(second.resetTime.getTime() > Date.now() + 50000);
      assert.equal((await store.get('k')).totalHits, 2);
      await store.decrement('k');
      assert.equal((await store.get('k')).totalHits, 1);
      assert.equal(await server.call('TYPE', 'count:k'), 'hash');
      // rate-limit-redis's name for it is the same class.
      assert.equal(RedisStore, RlStore);
    });
  });
}

test.describe('express-rate-limit when the server is gone', () => {
  for (const c of CLIENTS) {
    test(`${c}: a store error is a 500, or passes with passOnStoreError`, async () => {
      const server = await servers.start('redis7');
      const conn = await connect(c, server.url);
      const strict = rateLimit({ windowMs: 60000, limit: 5, store: new RlStore({ sendCommand: conn.sendCommand, prefix: 'strict:' }), logger: quiet });
      const open = rateLimit({ windowMs: 60000, limit: 5, store: new RlStore({ sendCommand: conn.sendCommand, prefix: 'open:' }), passOnStoreError: true, logger: quiet });
      const a = await serve('express5', strict);
      const b = await serve('express4', open);
      try {
        assert.equal((await a.get()).status, 200);
        assert.equal((await b.get()).status, 200);
        await server.stop();
        assert.equal((await a.get()).status, 500);
        assert.equal((await b.get()).status, 200);
      } finally {
        await a.close();
        await b.close();
        await conn.close();
        await server.stop();
      }
    });
  }
});
