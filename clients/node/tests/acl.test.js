'use strict';
// The ACL recipes, as written, are enough for both adapters, with node-redis
// and ioredis, on their default prefixes:
// - the README's module recipe (rl's category and rl's key pattern), on the
//   servers that have module ACL categories (Redis 8.2, Valkey 9.1; Redis
//   7.0 has none). The edition probe (COMMAND is outside @ratelimit) and the
//   prefixes (`~rl:*`) are what this holds.
// - docs/operations.md's function-edition recipe (FCALL, FCALL_RO and the
//   commands the library runs), on Redis 7.0 and Valkey 9.1 with only the
//   library, loaded by the default user: the library's commands run as the
//   caller, so this holds the list, clearing calls included.
const test = require('node:test');
const assert = require('node:assert/strict');
const { rateLimit } = require('express-rate-limit');
const { RateLimiterRl, RlStore } = require('rl-stores');
const { RateLimiterRes } = require('rate-limiter-flexible');
const servers = require('./helpers/servers');
const { connect } = require('./helpers/clients');
const { moduleRecipe, libraryRecipe, credentials } = require('./helpers/recipes');

const quiet = { error: () => {}, warn: () => {}, info: () => {} };

async function statuses(app, n) {
  const http = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const out = [];
  try {
    for (let i = 0; i < n; i++) {
      const res = await fetch(`http://127.0.0.1:${http.address().port}/`);
      await res.text();
      out.push(res.status);
    }
  } finally {
    await new Promise((resolve) => http.close(resolve));
  }
  return out;
}

const SETUPS = [
  { kind: 'redis8', recipe: moduleRecipe, edition: 'module', name: "the README's module recipe" },
  { kind: 'valkey9-module', recipe: moduleRecipe, edition: 'module', name: "the README's module recipe" },
  { kind: 'redis7-library', recipe: libraryRecipe, edition: 'functions', name: "the library's recipe" },
  { kind: 'valkey9', recipe: libraryRecipe, edition: 'functions', name: "the library's recipe" },
];

for (const { kind, recipe, edition, name } of SETUPS) {
  test.describe(`${name} on ${kind}`, () => {
    let server;
    let url;
    test.before(async () => {
      server = await servers.start(kind);
      const line = recipe();
      assert.equal(await server.call(...line), 'OK');
      const { username, password } = credentials(line);
      url = `redis://${username}:${password}@127.0.0.1:${server.port}`;
    });
    test.after(async () => {
      if (server) await server.stop();
    });

    for (const client of ['redis6', 'redis4', 'ioredis']) {
      test(`${client}: RateLimiterRl limits as the recipe's user`, async () => {
        await server.call('FLUSHALL');
        const conn = await connect(client, url);
        try {
          const limiter = new RateLimiterRl({ storeClient: conn.client, points: 3, duration: 60 });
          assert.equal(await limiter.ready(), edition);
          const answers = [];
          for (let i = 0; i < 4; i++) {
            answers.push(await limiter.consume('user').then(() => 'ok', (e) => {
              if (!(e instanceof RateLimiterRes)) throw e;
              return 'rejected';
            }));
          }
          assert.deepEqual(answers, ['ok', 'ok', 'ok', 'rejected']);
          // The window and the tally of the refused point, both under rl:.
          assert.deepEqual((await server.call('KEYS', '*')).sort(), ['rl:flx!over:user', 'rl:flx:user']);
          if (edition === 'functions') {
            // Every other call, the clearing ones too: the library's recipe
            // has DEL (the module's needs +del added for them).
            assert.ok((await limiter.get('user')) instanceof RateLimiterRes);
            assert.ok((await limiter.reward('user', 1)) instanceof RateLimiterRes);
            assert.ok((await limiter.penalty('user', 1)) instanceof RateLimiterRes);
            assert.equal((await limiter.block('user', 60)).msBeforeNext, 60000);
            await assert.rejects(limiter.consume('user'), (e) => e instanceof RateLimiterRes && e.msBeforeNext > 50000);
            assert.equal(await limiter.delete('user'), true);
            assert.equal((await limiter.consume('user')).remainingPoints, 2);
          }
        } finally {
          await conn.close();
        }
      });

      test(`${client}: an express-rate-limit app with RlStore limits as the recipe's user`, async () => {
        await server.call('FLUSHALL');
        const conn = await connect(client, url);
        try {
          const express = require('express5');
          const app = express();
          app.use(rateLimit({ windowMs: 60000, limit: 3, store: new RlStore({ sendCommand: conn.sendCommand }), logger: quiet }));
          app.get('/', (req, res) => res.send('ok'));
          assert.deepEqual(await statuses(app, 5), [200, 200, 200, 429, 429]);
          const keys = await server.call('KEYS', '*');
          assert.ok(keys.length === 1 && keys[0].startsWith('rl:erl:'), keys.join(' '));
          if (edition === 'functions') {
            // resetKey (DEL) as this user: the client is let through again.
            const store = new RlStore({ sendCommand: conn.sendCommand });
            store.init({ windowMs: 60000 });
            await store.resetKey(keys[0].slice('rl:erl:'.length));
            assert.deepEqual(await server.call('KEYS', '*'), []);
          }
        } finally {
          await conn.close();
        }
      });
    }
  });
}
