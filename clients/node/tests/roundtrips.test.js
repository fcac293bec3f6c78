'use strict';
// The commands each hit sends, seen by MONITOR (which leaves out those a
// function runs inside the server): one per hit, admitted or rejected.
const test = require('node:test');
const assert = require('node:assert/strict');
const { RateLimiterRl, RlStore } = require('rl-stores');
const { CLIENTS, suiteServer } = require('./helpers/clients');

const HIT = { redis7: '"RL.SLIDE"', valkey9: '"FCALL" "rl_slide" "1"' };
const COUNT = { redis7: '"RL.BUCKETS"', valkey9: '"FCALL" "rl_buckets" "1"' };

async function commandsOf(server, action) {
  const m = await server.monitor();
  try {
    await action();
    return await m.settle();
  } finally {
    m.close();
  }
}

const settle = (p) => p.then(() => 'admitted', () => 'rejected');

for (const kind of ['redis7', 'valkey9']) {
  test.describe(`round trips on ${kind}`, () => {
    const { server, conns } = suiteServer(kind);

    for (const c of CLIENTS) {
      test(`${c}: a consume is one command, admitted, rejected or blocked`, async () => {
        const limiter = new RateLimiterRl({ storeClient: conns[c].client, points: 1, duration: 60, keyPrefix: `rt-${c}` });
        await limiter.ready();
        for (const expect of ['admitted', 'rejected', 'rejected']) {
          let outcome;
          const seen = await commandsOf(server, async () => {
            outcome = await settle(limiter.consume('user'));
          });
          assert.equal(outcome, expect);
          assert.equal(seen.length, 1, `one command, saw: ${seen.join(' | ')}`);
          assert.ok(seen[0].startsWith(HIT[kind]), seen[0]);
        }
        await limiter.block('user', 60);
        const seen = await commandsOf(server, async () => assert.equal(await settle(limiter.consume('user')), 'rejected'));
        assert.equal(seen.length, 1, seen.join(' | '));
      });

      test(`${c}: an express-rate-limit hit is one command, counted or over the limit`, async () => {
        const store = new RlStore({ sendCommand: conns[c].sendCommand, prefix: `rt-${c}:` });
        await store.init({ windowMs: 60000 });
        for (let i = 0; i < 3; i++) {
          const seen = await commandsOf(server, () => store.increment('ip'));
          assert.equal(seen.length, 1, seen.join(' | '));
          assert.ok(seen[0].startsWith(COUNT[kind]), seen[0]);
        }
      });
    }

    test('the rejection that starts a block writes it in the same command (BLOCK), where RateLimiterRedis needs a second round trip', async () => {
      const limiter = new RateLimiterRl({ storeClient: conns.ioredis.client, points: 1, duration: 60, blockDuration: 60, keyPrefix: 'rt-block' });
      await limiter.consume('user');
      const seen = await commandsOf(server, async () => assert.equal(await settle(limiter.consume('user')), 'rejected'));
      assert.equal(seen.length, 1, seen.join(' | '));
      assert.ok(seen[0].includes('"BLOCK" "60000"'), seen[0]);
      // Blocked from then on: one command per hit.
      const after = await commandsOf(server, async () => assert.equal(await settle(limiter.consume('user')), 'rejected'));
      assert.equal(after.length, 1, after.join(' | '));
    });
  });
}
