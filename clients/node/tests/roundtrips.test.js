'use strict';
// The commands each hit sends, seen by MONITOR (which leaves out those a
// function runs inside the server): one per admitted hit; a rejected one
// also counts its points in the tally (RL.CHARGE FIXED), as
// RateLimiterRedis's counter counts them.
const test = require('node:test');
const assert = require('node:assert/strict');
const { RateLimiterRl, RlStore } = require('rl-stores');
const { CLIENTS, suiteServer } = require('./helpers/clients');

const HIT = { redis7: '"RL.SLIDE"', valkey9: '"FCALL" "rl_slide" "1"' };
const COUNT = { redis7: '"RL.BUCKETS"', valkey9: '"FCALL" "rl_buckets" "1"' };
const TALLY = { redis7: '"RL.CHARGE" "FIXED"', valkey9: '"FCALL" "rl_charge" "1"' };

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
      test(`${c}: a consume is one command when admitted, two when rejected or blocked`, async () => {
        const limiter = new RateLimiterRl({ storeClient: conns[c].client, points: 1, duration: 60, keyPrefix: `rt-${c}` });
        await limiter.ready();
        for (const expect of ['admitted', 'rejected', 'rejected']) {
          let outcome;
          const seen = await commandsOf(server, async () => {
            outcome = await settle(limiter.consume('user'));
          });
          assert.equal(outcome, expect);
          assert.equal(seen.length, expect === 'admitted' ? 1 : 2, `saw: ${seen.join(' | ')}`);
          assert.ok(seen[0].startsWith(HIT[kind]), seen[0]);
          if (expect === 'rejected') assert.ok(seen[1].startsWith(TALLY[kind]) && seen[1].includes('!over:user'), seen[1]);
        }
        await limiter.block('user', 60);
        const seen = await commandsOf(server, async () => assert.equal(await settle(limiter.consume('user')), 'rejected'));
        assert.equal(seen.length, 2, seen.join(' | '));
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

    test('the rejection that starts a block writes it in the same command (BLOCK), then only the tally', async () => {
      const limiter = new RateLimiterRl({ storeClient: conns.ioredis.client, points: 1, duration: 60, blockDuration: 60, keyPrefix: 'rt-block' });
      await limiter.consume('user');
      const seen = await commandsOf(server, async () => assert.equal(await settle(limiter.consume('user')), 'rejected'));
      assert.equal(seen.length, 2, seen.join(' | '));
      assert.ok(seen[0].includes('"BLOCK" "60000"'), seen[0]);
      assert.ok(seen[1].startsWith(TALLY[kind]), seen[1]);
      // Blocked from then on: the same two per hit.
      const after = await commandsOf(server, async () => assert.equal(await settle(limiter.consume('user')), 'rejected'));
      assert.equal(after.length, 2, after.join(' | '));
    });
  });
}
