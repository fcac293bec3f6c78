'use strict';
// RateLimiterRl against RateLimiterRedis, side by side on the same server in
// the same run: the same calls, the same answers where an app decides (a
// rejection or not, consumedPoints, remainingPoints, msBeforeNext), after a
// breach, during a block and after penalty; every RateLimiterRedis option
// honoured or refused by name; and the inputs rate-limiter-flexible takes.
const test = require('node:test');
const assert = require('node:assert/strict');
const { RateLimiterRedis, RateLimiterRes, RateLimiterMemory } = require('rate-limiter-flexible');
const { RateLimiterRl } = require('rl-stores');
const servers = require('./helpers/servers');
const { connect, suiteServer } = require('./helpers/clients');

const EDITION = { redis7: 'module', valkey9: 'functions' };

// One call's outcome: [op, 'ok' | 'rejected' | 'null', consumed, remaining, ms].
async function outcome(limiter, op, args) {
  try {
    const r = await limiter[op]('k', ...args);
    return r === null ? [op, 'null'] : [op, 'ok', r.consumedPoints, r.remainingPoints, r.msBeforeNext];
  } catch (e) {
    if (!(e instanceof RateLimiterRes)) throw e;
    return [op, 'rejected', e.consumedPoints, e.remainingPoints, e.msBeforeNext];
  }
}

async function play(Limiter, options, script) {
  const limiter = new Limiter(options);
  const out = [];
  for (const [op, ...args] of script) out.push(await outcome(limiter, op, args));
  return out;
}

// The scripts, each from a fresh key: the four measurements first.
const SCRIPTS = {
  'rejected consumes count on': [{ points: 2, duration: 60 }, [['consume'], ['consume'], ['consume'], ['consume'], ['get']]],
  'penalty past the limit': [{ points: 2, duration: 60 }, [['penalty', 3], ['get'], ['consume'], ['get'], ['reward', 2], ['get'], ['consume']]],
  'blockDuration: the breach blocks, the block counts on': [
    { points: 2, duration: 60, blockDuration: 600 },
    [['consume'], ['consume'], ['consume'], ['get'], ['consume'], ['get']],
  ],
  'block(k, secs) by hand': [{ points: 3, duration: 60 }, [['consume'], ['block', 10], ['get'], ['consume'], ['get']]],
  'consume(k, 0) reads, consume(k, -1) gives back': [
    { points: 2, duration: 60 },
    [['consume', 0], ['consume'], ['consume', 0], ['consume'], ['consume', 0], ['consume', -1], ['get']],
  ],
  'duration 0 never expires, block(k, 0) never ends': [{ points: 2, duration: 0 }, [['consume'], ['consume'], ['consume'], ['get'], ['block', 0], ['get']]],
  'blockOnConsumed blocks when the count reaches it': [
    { points: 2, duration: 60, blockDuration: 100, blockOnConsumed: 4 },
    [['consume'], ['consume'], ['consume'], ['get'], ['consume'], ['get'], ['consume'], ['get']],
  ],
  'a cost above points': [{ points: 3, duration: 60, blockDuration: 30 }, [['consume', 5], ['get'], ['consume'], ['get']]],
  'reward after a breach takes the refused points first': [{ points: 2, duration: 60 }, [['consume'], ['consume'], ['consume'], ['reward'], ['get'], ['consume'], ['get']]],
};

// The two clocks differ by the ms between calls: a wait is the same within
// this, or -1 (never) in both.
const SLACK_MS = 250;

function assertSame(ours, theirs, label) {
  assert.deepEqual(ours.map((o) => o.slice(0, 4)), theirs.map((o) => o.slice(0, 4)), label);
  ours.forEach((o, i) => {
    const [a, b] = [o[4], theirs[i][4]];
    if (a === undefined) return;
    const same = a === b || (a >= 0 && b >= 0 && Math.abs(a - b) <= SLACK_MS);
    assert.ok(same, `${label}: call ${i} (${o[0]}) msBeforeNext ${a}, RateLimiterRedis ${b}`);
  });
}

for (const kind of ['redis7', 'valkey9']) {
  test.describe(`RateLimiterRl answers as RateLimiterRedis on ${kind} (${EDITION[kind]})`, () => {
    const { server, conns } = suiteServer(kind);
    let n = 0;
    for (const client of ['ioredis', 'redis5']) {
      for (const [name, [options, script]] of Object.entries(SCRIPTS)) {
        test(`${client}: ${name}`, async () => {
          n++;
          const storeClient = conns[client].client;
          const useRedisPackage = client !== 'ioredis';
          const theirs = await play(RateLimiterRedis, { storeClient, useRedisPackage, keyPrefix: `theirs${n}`, ...options }, script);
          const ours = await play(RateLimiterRl, { storeClient, keyPrefix: `ours${n}`, ...options }, script);
          assertSame(ours, theirs, name);
        });
      }
    }

    test("the wiki's over-limit check, get(k).consumedPoints > points, holds after a breach", async () => {
      const limiter = new RateLimiterRl({ storeClient: conns.ioredis.client, points: 3, duration: 86400, blockDuration: 600, keyPrefix: 'wiki' });
      for (let i = 0; i < 3; i++) await limiter.consume('ip');
      assert.equal((await limiter.get('ip')).consumedPoints, 3);
      await assert.rejects(limiter.consume('ip'), (e) => e instanceof RateLimiterRes && e.msBeforeNext === 600000);
      const got = await limiter.get('ip');
      assert.ok(got.consumedPoints > 3, `consumedPoints ${got.consumedPoints}`);
      assert.ok(got.msBeforeNext > 599000 && got.msBeforeNext <= 600000, `msBeforeNext ${got.msBeforeNext}`);
    });

    test("switching keeps RateLimiterRedis's keyPrefix: its counter is left as it was, and the switch answers", async () => {
      const storeClient = conns.ioredis.client;
      const options = { storeClient, points: 2, duration: 0, keyPrefix: 'login_fail' };
      const theirs = new RateLimiterRedis(options);
      await theirs.consume('ip');
      const before = await server.call('GET', 'login_fail:ip');
      const ours = new RateLimiterRl(options);
      assert.equal((await ours.consume('ip')).remainingPoints, 1);
      assert.equal((await ours.get('ip')).consumedPoints, 1);
      assert.equal(await server.call('GET', 'login_fail:ip'), before);
      assert.equal(await server.call('PTTL', 'login_fail:ip'), -1);
      assert.equal(await server.call('ZCARD', 'rl:flx:login_fail:ip'), 1);
      // A keyPrefix under rl: is kept as it is (rl-stores 1.0's keys).
      const kept = new RateLimiterRl({ storeClient, points: 2, duration: 60, keyPrefix: 'rl:login' });
      await kept.consume('ip');
      assert.equal(await server.call('ZCARD', 'rl:login:ip'), 1);
    });
  });
}

test.describe('RateLimiterRedis options and inputs: honoured, or refused by name', () => {
  const { conns } = suiteServer('redis7');
  const make = (options) => new RateLimiterRl({ storeClient: conns.ioredis.client, points: 2, duration: 60, ...options });

  test('customIncrTtlLuaScript and useRedis3AndLowerPackage are refused at construction', () => {
    assert.throws(() => make({ customIncrTtlLuaScript: 'return 1' }), /customIncrTtlLuaScript is not supported/);
    assert.throws(() => make({ useRedis3AndLowerPackage: true }), /useRedis3AndLowerPackage is not supported/);
  });

  test('points 0, below 0 or a fraction is refused at construction, naming points', () => {
    for (const points of [0, -1, 2.5]) {
      assert.throws(() => make({ points }), (e) => e instanceof RangeError && /points must be an integer from 1/.test(e.message) && e.message.includes(`got ${points}`));
    }
  });

  test('a finite duration or blockDuration above 10^8 s is refused, naming it', () => {
    assert.throws(() => make({ duration: 1e8 + 1 }), /duration must be at most 100000000 s/);
    assert.throws(() => make({ blockDuration: 1e8 + 1 }), /blockDuration must be at most 100000000 s/);
  });

  test('a decimal or non-numeric string consume is refused at the call, as RateLimiterRedis refuses it', async () => {
    await assert.rejects(make({ keyPrefix: 'dec' }).consume('k', 1.5), /decimal number of points/);
    await assert.rejects(make({ keyPrefix: 'dec' }).consume('k', '1.5'), /string different than integer/);
  });

  test('execEvenly spaces the admissions, as for RateLimiterRedis', async () => {
    const limiter = make({ points: 5, duration: 1, execEvenly: true, keyPrefix: 'even' });
    await limiter.consume('k');
    const started = Date.now();
    await limiter.consume('k');
    // rate-limiter-flexible delays the second by msBeforeNext / (remaining + 2), about 1000 / 5 ms.
    assert.ok(Date.now() - started >= 150, `waited ${Date.now() - started} ms`);
  });

  test('rejectIfRedisNotReady: an unready client answers from the insurance limiter at once', async () => {
    const Redis = require('ioredis');
    const server = await servers.start('redis7');
    const client = new Redis(server.url, { lazyConnect: true });
    client.on('error', () => {});
    await client.connect();
    try {
      const insurance = new RateLimiterMemory({ points: 1, duration: 60 });
      const limiter = new RateLimiterRl({ storeClient: client, points: 5, duration: 60, rejectIfRedisNotReady: true, insuranceLimiter: insurance });
      assert.equal((await limiter.consume('k')).remainingPoints, 4);
      await server.stop();
      // Once ioredis has seen the connection close it reconnects, and would
      // hold each command (10 s and more with its default retries).
      for (let i = 0; i < 200 && client.status === 'ready'; i++) await new Promise((r) => setTimeout(r, 10));
      assert.notEqual(client.status, 'ready');
      const started = Date.now();
      assert.equal((await limiter.consume('k')).remainingPoints, 0);
      await assert.rejects(limiter.consume('k'), (e) => e instanceof RateLimiterRes);
      const bare = new RateLimiterRl({ storeClient: client, points: 5, duration: 60, rejectIfRedisNotReady: true });
      await assert.rejects(bare.consume('k'), /Redis connection is not ready/);
      assert.ok(Date.now() - started < 1000, `answered in ${Date.now() - started} ms`);
    } finally {
      client.disconnect();
      await server.stop();
    }
  });

  test('inMemoryBlockOnConsumed counts the rejections, so the in-memory block starts as for RateLimiterRedis', async () => {
    const outcomes = {};
    for (const [name, Limiter] of [['RateLimiterRedis', RateLimiterRedis], ['RateLimiterRl', RateLimiterRl]]) {
      const limiter = new Limiter({ storeClient: conns.ioredis.client, points: 2, duration: 60, inMemoryBlockOnConsumed: 4, inMemoryBlockDuration: 30, keyPrefix: `mem-${name}` });
      const out = [];
      for (let i = 0; i < 6; i++) out.push((await outcome(limiter, 'consume', [])).slice(1, 3));
      outcomes[name] = out;
    }
    assert.deepEqual(outcomes.RateLimiterRl, outcomes.RateLimiterRedis);
    // The fifth and sixth are answered in memory: RateLimiterRes(0, ms) with consumedPoints 0.
    assert.deepEqual(outcomes.RateLimiterRl.slice(4), [['rejected', 0], ['rejected', 0]]);
  });
});

test('an unready node-redis client with rejectIfRedisNotReady answers from the insurance limiter at once', async () => {
  const server = await servers.start('valkey9');
  const conn = await connect('redis5', server.url);
  try {
    const limiter = new RateLimiterRl({
      storeClient: conn.client,
      points: 5,
      duration: 60,
      rejectIfRedisNotReady: true,
      insuranceLimiter: new RateLimiterMemory({ points: 3, duration: 60 }),
    });
    assert.equal((await limiter.consume('k')).remainingPoints, 4);
    await server.stop();
    await new Promise((r) => setTimeout(r, 100));
    assert.equal((await limiter.consume('k')).remainingPoints, 2);
  } finally {
    await conn.close();
    await server.stop();
  }
});
