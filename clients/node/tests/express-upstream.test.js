'use strict';
// express-rate-limit in front of rate-limit-redis's RedisStore and in front
// of RlStore, side by side on one server (Redis 7.0 with the module, Valkey
// 9.1 with only the library), each request sent to both: past the limit
// they answer the same statuses and the same limit and remaining headers,
// and getKey() the same totalHits. The reset differs as docs/clients.md
// says: rate-limit-redis's fixed window ends windowMs after its first hit,
// rl's sliding count empties windowMs after the newest (plus the rest of
// its bucket).
const test = require('node:test');
const assert = require('node:assert/strict');
const { rateLimit } = require('express-rate-limit');
const { RedisStore: TheirStore } = require('rate-limit-redis');
const { RlStore } = require('rl-stores');
const { suiteServer } = require('./helpers/clients');

const quiet = { error: () => {}, warn: () => {}, info: () => {} };
const WINDOW_MS = 6000; // buckets of 100 ms
const LIMIT = 3;
// The headers of standardHeaders 'draft-6' and of legacyHeaders (the default), and Retry-After on a 429.
const SAME = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-policy', 'x-ratelimit-limit', 'x-ratelimit-remaining'];

async function serve(limiter) {
  const express = require('express5');
  const app = express();
  app.use(limiter);
  app.get('/', (req, res) => res.send('ok'));
  const http = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const base = `http://127.0.0.1:${http.address().port}/`;
  return {
    async get() {
      const res = await fetch(base);
      await res.text();
      return { status: res.status, headers: Object.fromEntries(res.headers) };
    },
    close: () => new Promise((resolve) => http.close(resolve)),
  };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

for (const kind of ['redis7', 'valkey9']) {
  test.describe(`express-rate-limit past its limit: rate-limit-redis and RlStore on ${kind}`, () => {
    const { conns } = suiteServer(kind);

    test('the same statuses, limit and remaining headers and totalHits; the reset as documented', async (t) => {
      const sendCommand = conns.redis5.sendCommand;
      const theirs = rateLimit({ windowMs: WINDOW_MS, limit: LIMIT, standardHeaders: 'draft-6', store: new TheirStore({ sendCommand, prefix: `up-${kind}:` }), logger: quiet });
      const ours = rateLimit({ windowMs: WINDOW_MS, limit: LIMIT, standardHeaders: 'draft-6', store: new RlStore({ sendCommand, prefix: `rl:erl-${kind}:` }), logger: quiet });
      const apps = { theirs: await serve(theirs), ours: await serve(ours) };
      t.after(() => Promise.all(Object.values(apps).map((a) => a.close())));
      const key = '127.0.0.1';
      // Before any hit: an object either way (rl's totalHits 0; rate-limit-redis
      // reads its script's nil as a number: NaN).
      const before = (await theirs.getKey(key)).totalHits;
      assert.ok(before === 0 || Number.isNaN(before), `rate-limit-redis: ${before}`);
      assert.equal((await ours.getKey(key)).totalHits, 0);
      const first = Date.now();
      const statuses = [];
      let newest;
      for (let i = 0; i < 6; i++) {
        // A second after the first hit, so the two resets part by that second.
        if (i === 1) await sleep(1000);
        newest = Date.now();
        const [a, b] = await Promise.all([apps.theirs.get(), apps.ours.get()]);
        assert.equal(b.status, a.status, `request ${i}`);
        statuses.push(a.status);
        for (const h of SAME) assert.equal(b.headers[h], a.headers[h], `request ${i}: ${h}`);
        assert.equal('retry-after' in b.headers, 'retry-after' in a.headers, `request ${i}: Retry-After`);
        // rate-limit-redis: the window's end, counted from the first hit;
        // rl: the newest hit's bucket leaving, a window after it.
        const theirReset = Number(a.headers['ratelimit-reset']);
        const ourReset = Number(b.headers['ratelimit-reset']);
        assert.ok(Math.abs(theirReset - Math.ceil((first + WINDOW_MS - Date.now()) / 1000)) <= 1, `request ${i}: rate-limit-redis's reset ${theirReset}`);
        assert.ok(Math.abs(ourReset - WINDOW_MS / 1000) <= 1, `request ${i}: RlStore's reset ${ourReset}`);
        // X-RateLimit-Reset: the same moments, in Unix seconds.
        assert.ok(Math.abs(Number(a.headers['x-ratelimit-reset']) - Math.ceil((first + WINDOW_MS) / 1000)) <= 1, `request ${i}: ${a.headers['x-ratelimit-reset']}`);
        assert.ok(Math.abs(Number(b.headers['x-ratelimit-reset']) - Math.ceil((newest + WINDOW_MS) / 1000)) <= 1, `request ${i}: ${b.headers['x-ratelimit-reset']}`);
        if (a.status === 429) {
          // The reset again (express-rate-limit reads the clock anew for it: a second's turn may part them).
          for (const h of [a.headers, b.headers]) assert.ok(Math.abs(h['retry-after'] - h['ratelimit-reset']) <= 1, `request ${i}: ${JSON.stringify(h)}`);
        }
      }
      assert.deepEqual(statuses, [200, 200, 200, 429, 429, 429]);
      // getKey: every request counted, the 429'd ones too, by both.
      const [a, b] = [await theirs.getKey(key), await ours.getKey(key)];
      assert.equal(a.totalHits, 6);
      assert.equal(b.totalHits, 6);
      const now = Date.now();
      assert.ok(Math.abs(a.resetTime.getTime() - (first + WINDOW_MS)) <= 250, `rate-limit-redis's resetTime ${a.resetTime.getTime() - now} ms ahead`);
      assert.ok(b.resetTime.getTime() >= newest + WINDOW_MS - 50 && b.resetTime.getTime() <= newest + WINDOW_MS + 100 + 250,
        `RlStore's resetTime ${b.resetTime.getTime() - now} ms ahead; the newest hit ${now - newest} ms ago`);
    });
  });
}
