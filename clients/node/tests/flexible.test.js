'use strict';
// rate-limiter-flexible's contract on RateLimiterRl, used directly, on Redis
// 7.0 with the module and on Valkey 9.1 with only the function library.
const test = require('node:test');
const assert = require('node:assert/strict');
const { RateLimiterRes, RateLimiterMemory } = require('rate-limiter-flexible');
const { RateLimiterRl } = require('rl-stores');
const servers = require('./helpers/servers');
const { CLIENTS, connect, suiteServer } = require('./helpers/clients');

const EDITION = { redis7: 'module', valkey9: 'functions' };

// Outcomes of `n` consumes, in order: the RateLimiterRes each resolved or rejected with.
async function drive(limiter, key, n, points = 1) {
  const out = [];
  for (let i = 0; i < n; i++) {
    try {
      out.push({ ok: true, res: await limiter.consume(key, points) });
    } catch (err) {
      out.push({ ok: false, res: err });
    }
  }
  return out;
}

for (const kind of ['redis7', 'valkey9']) {
  test.describe(`RateLimiterRl on ${kind} (${EDITION[kind]})`, () => {
    const { server, conns } = suiteServer(kind);

    for (const c of CLIENTS) {
      test(`${c}: consume admits exactly points, then rejects with RateLimiterRes`, async () => {
        const limiter = new RateLimiterRl({ storeClient: conns[c].client, points: 5, duration: 60, keyPrefix: `exact-${c}` });
        assert.equal(await limiter.ready(), EDITION[kind]);
        const out = await drive(limiter, 'user', 8);
        assert.deepEqual(out.map((o) => o.ok), [true, true, true, true, true, false, false, false]);
        assert.deepEqual(out.slice(0, 5).map((o) => o.res.remainingPoints), [4, 3, 2, 1, 0]);
        assert.deepEqual(out.slice(0, 5).map((o) => o.res.consumedPoints), [1, 2, 3, 4, 5]);
        assert.deepEqual(out.slice(0, 5).map((o) => o.res.isFirstInDuration), [true, false, false, false, false]);
        for (const { res } of out.slice(5)) {
          assert.ok(res instanceof RateLimiterRes, `a rejection is a RateLimiterRes, got ${res}`);
          assert.equal(res.remainingPoints, 0);
          assert.ok(res.msBeforeNext > 0 && res.msBeforeNext <= 60000, `msBeforeNext ${res.msBeforeNext}`);
        }
        // Each rejection counted on, as RateLimiterRedis's counter counts it.
        assert.deepEqual(out.slice(5).map((o) => o.res.consumedPoints), [6, 7, 8]);
        // RL.SLIDE's log: one member per admitted point; the rejections are in the tally.
        assert.equal(await server.call('ZCARD', `rl:flx:exact-${c}:user`), 5);
        assert.equal(await server.call('GET', `rl:flx:exact-${c}!over:user`), '3');
      });

      test(`${c}: switching from RateLimiterRedis is replacing the class: the same options, the same answers`, async () => {
        const { RateLimiterRedis } = require('rate-limiter-flexible');
        const shape = (o) => [o.ok, o.res.remainingPoints, o.res.consumedPoints, o.res.isFirstInDuration];
        const answers = {};
        for (const [name, Limiter] of [['RateLimiterRedis', RateLimiterRedis], ['RateLimiterRl', RateLimiterRl]]) {
          // useRedisPackage: RateLimiterRedis's switch for node-redis; RateLimiterRl takes and ignores it.
          const options = { storeClient: conns[c].client, useRedisPackage: !c.startsWith('ioredis'), points: 3, duration: 60, keyPrefix: `switch-${name}-${c}` };
          answers[name] = await drive(new Limiter(options), 'user', 5);
        }
        const theirs = answers.RateLimiterRedis;
        const ours = answers.RateLimiterRl;
        assert.deepEqual(theirs.map((o) => o.ok), [true, true, true, false, false]);
        // Field by field, the rejections included.
        assert.deepEqual(ours.map(shape), theirs.map(shape));
        for (const o of [...ours, ...theirs]) assert.ok(o.res instanceof RateLimiterRes);
      });

      test(`${c}: limiter 'buckets' admits exactly points, with costs above 100`, async () => {
        const limiter = new RateLimiterRl({ storeClient: conns[c].client, points: 500, duration: 60, limiter: 'buckets', keyPrefix: `buckets-${c}` });
        const out = await drive(limiter, 'user', 4, 200);
        assert.deepEqual(out.map((o) => o.ok), [true, true, false, false]);
        assert.equal(out[1].res.remainingPoints, 100);
        assert.ok(out[2].res instanceof RateLimiterRes);
        const last = await limiter.consume('user', 100);
        assert.equal(last.remainingPoints, 0);
        await assert.rejects(limiter.consume('user', 1), (e) => e instanceof RateLimiterRes);
        assert.equal(await server.call('TYPE', `rl:flx:buckets-${c}:user`), 'hash');
      });
    }

    test('a cost above points is rejected as RateLimiterRedis rejects it, and writes nothing', async () => {
      const limiter = new RateLimiterRl({ storeClient: conns.redis5.client, points: 5, duration: 60, keyPrefix: 'over' });
      await assert.rejects(limiter.consume('user', 6), (e) => e instanceof RateLimiterRes && e.consumedPoints === 6 && e.remainingPoints === 0);
      assert.equal(await server.call('EXISTS', 'rl:flx:over:user'), 0);
      assert.equal((await limiter.consume('user', 5)).remainingPoints, 0);
    });

    test("a cost above 100 on limiter 'slide' is an error, not a rejection", async () => {
      const limiter = new RateLimiterRl({ storeClient: conns.ioredis.client, points: 500, duration: 60, keyPrefix: 'cost' });
      await assert.rejects(limiter.consume('user', 101), (e) => e instanceof RangeError && /at most 100/.test(e.message));
      assert.equal((await limiter.consume('user', 100)).remainingPoints, 400);
    });

    test('reward gives points back through RL.REFUND', async () => {
      const limiter = new RateLimiterRl({ storeClient: conns.redis4.client, points: 5, duration: 60, keyPrefix: 'reward' });
      await drive(limiter, 'user', 5);
      const res = await limiter.reward('user', 2);
      assert.equal(res.remainingPoints, 2);
      assert.equal(res.consumedPoints, 3);
      assert.equal(await server.call('ZCARD', 'rl:flx:reward:user'), 3);
      const out = await drive(limiter, 'user', 3);
      assert.deepEqual(out.map((o) => o.ok), [true, true, false]);
      // Never below zero: a reward of more than the window holds gives back what it holds.
      assert.equal((await limiter.reward('user', 50)).remainingPoints, 5);
      assert.equal(await server.call('EXISTS', 'rl:flx:reward:user'), 0);
    });

    test('penalty records every point, past the limit, through RL.CHARGE', async () => {
      const limiter = new RateLimiterRl({ storeClient: conns.ioredis.client, points: 5, duration: 60, keyPrefix: 'penalty' });
      const first = await limiter.penalty('user', 3);
      assert.equal(first.consumedPoints, 3);
      assert.equal(first.remainingPoints, 2);
      const second = await limiter.penalty('user', 4);
      assert.equal(second.consumedPoints, 7);
      assert.equal(second.remainingPoints, 0);
      // All 7 recorded, 2 past the limit (RateLimiterRedis's counter says 7 too).
      assert.equal(await server.call('ZCARD', 'rl:flx:penalty:user'), 7);
      assert.equal((await limiter.get('user')).consumedPoints, 7);
      await assert.rejects(limiter.consume('user'), (e) => e instanceof RateLimiterRes && e.consumedPoints === 8);
      // A reward takes back the newest points first, the refused ones: the
      // window stays full (7 entries), as RateLimiterRedis's counter (5) is.
      const back = await limiter.reward('user', 3);
      assert.deepEqual([back.consumedPoints, back.remainingPoints], [5, 0]);
      await assert.rejects(limiter.consume('user'), (e) => e instanceof RateLimiterRes && e.consumedPoints === 6);
    });

    test("penalty past the limit on limiter 'buckets' records every point, above 100 a call", async () => {
      const limiter = new RateLimiterRl({ storeClient: conns.redis5.client, points: 500, duration: 60, limiter: 'buckets', keyPrefix: 'penalty-b' });
      await limiter.consume('user', 400);
      const res = await limiter.penalty('user', 350);
      assert.equal(res.consumedPoints, 750);
      assert.equal(res.remainingPoints, 0);
      // 750 recorded: a reward of 249 still leaves the window full, one more frees one.
      assert.equal((await limiter.reward('user', 249)).remainingPoints, 0);
      await assert.rejects(limiter.consume('user'), (e) => e instanceof RateLimiterRes);
      const back = await limiter.reward('user', 2);
      assert.deepEqual([back.consumedPoints, back.remainingPoints], [500, 0]);
    });

    test('get answers null for an unknown key, the window otherwise; delete empties it', async () => {
      const limiter = new RateLimiterRl({ storeClient: conns.redis5.client, points: 5, duration: 60, keyPrefix: 'get' });
      assert.equal(await limiter.get('user'), null);
      await drive(limiter, 'user', 2);
      const res = await limiter.get('user');
      assert.ok(res instanceof RateLimiterRes);
      assert.equal(res.consumedPoints, 2);
      assert.equal(res.remainingPoints, 3);
      assert.ok(res.msBeforeNext > 0 && res.msBeforeNext <= 60000);
      assert.equal(await limiter.delete('user'), true);
      assert.equal(await limiter.get('user'), null);
      assert.equal(await limiter.delete('user'), false);
    });

    test('blockDuration: the first rejection blocks the key, which stays blocked when the window empties', async () => {
      const limiter = new RateLimiterRl({ storeClient: conns.ioredis.client, points: 2, duration: 60, blockDuration: 120, keyPrefix: 'blockdur' });
      await drive(limiter, 'user', 2);
      const [crossing] = await drive(limiter, 'user', 1);
      assert.equal(crossing.ok, false);
      assert.equal(crossing.res.msBeforeNext, 120000);
      // The window emptied (both points given back): the block, which lives
      // in the window's key, still rejects.
      await limiter.reward('user', 2);
      assert.equal(await server.call('EXISTS', 'rl:flx:blockdur:user'), 1);
      assert.equal(await server.call('EXISTS', '{rl:flx:blockdur:user}:block'), 0);
      const [blocked] = await drive(limiter, 'user', 1);
      assert.equal(blocked.ok, false);
      assert.ok(blocked.res instanceof RateLimiterRes);
      assert.ok(blocked.res.msBeforeNext > 60000, `blocked for ${blocked.res.msBeforeNext} ms`);
      // The window holds 1 (the reward took the refused point, then one
      // entry), the tally this rejection: RateLimiterRedis's counter would
      // say 2 and admit, as its block is only the counter's TTL; rl's block
      // holds until its end.
      assert.equal(blocked.res.consumedPoints, 3);
      const got = await limiter.get('user');
      assert.equal(got.remainingPoints, 0);
      // delete lifts the block with the window.
      assert.equal(await limiter.delete('user'), true);
      assert.equal((await limiter.consume('user')).remainingPoints, 1);
    });

    test('block() by hand holds on a limiter without blockDuration, in the key itself, and keeps the counts', async () => {
      const limiter = new RateLimiterRl({ storeClient: conns.ioredis.client, points: 3, duration: 60, keyPrefix: 'byhand' });
      await drive(limiter, 'user', 1);
      await limiter.block('user', 120);
      const [blocked] = await drive(limiter, 'user', 1);
      assert.equal(blocked.ok, false);
      assert.ok(blocked.res.msBeforeNext > 60000, `blocked for ${blocked.res.msBeforeNext} ms`);
      // The window's key (its TTL covers the block, past the window) and the
      // tally (points + 1 while blocked, as RateLimiterRedis's counter).
      assert.deepEqual((await server.call('KEYS', 'rl:flx:byhand*')).sort(), ['rl:flx:byhand!over:user', 'rl:flx:byhand:user']);
      assert.ok(Number(await server.call('PTTL', 'rl:flx:byhand:user')) > 60000);
      const got = await limiter.get('user');
      assert.deepEqual([got.remainingPoints, got.consumedPoints], [0, 5]);
    });

    test('set is refused: rl records only what it admits', async () => {
      const limiter = new RateLimiterRl({ storeClient: conns.redis5.client, points: 5, duration: 60, keyPrefix: 'set' });
      await assert.rejects(limiter.set('user', 3, 60), /set\(\) is not supported/);
      assert.equal(await server.call('EXISTS', 'rl:flx:set:user'), 0);
    });
  });
}

// On Valkey the server's clock stands still and moves when the test says,
// so a block's end and a window's end are exact.
test.describe('RateLimiterRl blocks on a stopped clock (valkey9, functions)', () => {
  let server;
  let conn;
  test.before(async () => {
    server = await servers.start('valkey9', { clock: true });
    conn = await connect('redis5', server.url);
  });
  test.after(async () => {
    if (conn) await conn.close();
    if (server) await server.stop();
  });

  test('a block outlasts the window and ends when blockDuration has passed', async () => {
    const limiter = new RateLimiterRl({ storeClient: conn.client, points: 2, duration: 1, blockDuration: 10, keyPrefix: 'clock' });
    await drive(limiter, 'user', 2);
    const [crossing] = await drive(limiter, 'user', 1);
    assert.equal(crossing.ok, false);
    assert.equal(crossing.res.msBeforeNext, 10000);
    server.advance(2000);
    const [blocked] = await drive(limiter, 'user', 1);
    assert.equal(blocked.ok, false);
    assert.equal(blocked.res.msBeforeNext, 8000);
    server.advance(7999);
    assert.equal((await drive(limiter, 'user', 1))[0].ok, false);
    server.advance(1);
    const [after] = await drive(limiter, 'user', 1);
    assert.equal(after.ok, true);
    assert.equal(after.res.remainingPoints, 1);
  });

  test('block() blocks a key with points left, and a later block() replaces it', async () => {
    const limiter = new RateLimiterRl({ storeClient: conn.client, points: 5, duration: 60, keyPrefix: 'explicit' });
    const res = await limiter.block('user', 30);
    assert.ok(res instanceof RateLimiterRes);
    assert.equal(res.msBeforeNext, 30000);
    assert.equal(res.consumedPoints, 6);
    const [blocked] = await drive(limiter, 'user', 1);
    assert.equal(blocked.ok, false);
    assert.equal(blocked.res.msBeforeNext, 30000);
    await limiter.block('user', 5);
    server.advance(5000);
    assert.equal((await drive(limiter, 'user', 1))[0].ok, true);
  });

  test('the window slides: a point comes back when its entry leaves', async () => {
    const limiter = new RateLimiterRl({ storeClient: conn.client, points: 2, duration: 10, keyPrefix: 'slides' });
    await drive(limiter, 'user', 1);
    server.advance(4000);
    await drive(limiter, 'user', 1);
    const [denied] = await drive(limiter, 'user', 1);
    assert.equal(denied.ok, false);
    assert.equal(denied.res.msBeforeNext, 6000);
    server.advance(6000);
    assert.deepEqual((await drive(limiter, 'user', 2)).map((o) => o.ok), [true, false]);
  });
});

// A server error reaches rate-limiter-flexible as its own stores' errors do:
// the insurance limiter answers, or the promise rejects with the Error.
test.describe('RateLimiterRl when the server is gone', () => {
  for (const c of CLIENTS) {
    test(`${c}: the insuranceLimiter answers; without one, consume rejects with the error`, async () => {
      const server = await servers.start('redis7');
      const conn = await connect(c, server.url);
      try {
        const insured = new RateLimiterRl({
          storeClient: conn.client,
          points: 5,
          duration: 60,
          keyPrefix: 'insured',
          insuranceLimiter: new RateLimiterMemory({ points: 1, duration: 60 }),
        });
        const bare = new RateLimiterRl({ storeClient: conn.client, points: 5, duration: 60, keyPrefix: 'bare' });
        assert.equal((await insured.consume('user')).remainingPoints, 4);
        assert.equal((await bare.consume('user')).remainingPoints, 4);
        await server.stop();
        // The insurance limiter's own answers: 1 point, then a rejection.
        assert.equal((await insured.consume('user')).remainingPoints, 0);
        await assert.rejects(insured.consume('user'), (e) => e instanceof RateLimiterRes && e.consumedPoints === 2);
        await assert.rejects(bare.consume('user'), (e) => e instanceof Error && !(e instanceof RateLimiterRes));
      } finally {
        await conn.close();
        await server.stop();
      }
    });
  }
});

// At maxmemory the server refuses rl's writes with OOM: both adapters surface
// it as their frameworks' errors, never as an admission.
for (const kind of ['redis7', 'valkey9']) {
  test(`${kind}: an OOM refusal is an error for both adapters, never an admission`, async () => {
    const server = await servers.start(kind);
    const conn = await connect('ioredis', server.url);
    try {
      const limiter = new RateLimiterRl({ storeClient: conn.client, points: 5, duration: 60, keyPrefix: 'oom' });
      const { RlStore } = require('rl-stores');
      const store = new RlStore({ sendCommand: conn.sendCommand, prefix: 'oom:' });
      store.init({ windowMs: 60000 });
      assert.equal((await limiter.consume('user')).remainingPoints, 4);
      assert.equal((await store.increment('ip')).totalHits, 1);
      await server.call('CONFIG', 'SET', 'maxmemory', '1');
      await assert.rejects(limiter.consume('user'), (e) => e instanceof Error && !(e instanceof RateLimiterRes) && /^OOM/.test(e.message));
      await assert.rejects(store.increment('ip'), (e) => /^OOM/.test(e.message));
      await server.call('CONFIG', 'SET', 'maxmemory', '0');
      assert.equal((await limiter.consume('user')).remainingPoints, 3);
    } finally {
      await conn.close();
      await server.stop();
    }
  });
}
