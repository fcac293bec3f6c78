'use strict';
// The README's ACL recipe, as written, is enough for both adapters: a user
// granted only rl's category and rl's key pattern runs RateLimiterRl and an
// express-rate-limit app with RlStore on their default prefixes, with
// node-redis and ioredis, on the servers that have module ACL categories
// (Redis 8.2, Valkey 9.1; Redis 7.0 has none). The edition probe
// (COMMAND is outside @ratelimit) and the prefixes (`~rl:*`) are what this
// holds.
const fs = require('fs');
const path = require('path');
const test = require('node:test');
const assert = require('node:assert/strict');
const { rateLimit } = require('express-rate-limit');
const { RateLimiterRl, RlStore } = require('rl-stores');
const { RateLimiterRes } = require('rate-limiter-flexible');
const servers = require('./helpers/servers');
const { connect } = require('./helpers/clients');

function readmeRecipe() {
  const text = fs.readFileSync(path.join(servers.ROOT, 'README.md'), 'utf8');
  const m = text.match(/`(ACL SETUSER [^`]+)`/);
  assert.ok(m, 'README.md has no `ACL SETUSER ...` recipe');
  return m[1].split(' ');
}

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

for (const kind of ['redis8', 'valkey9-module']) {
  test.describe(`the README's ACL recipe on ${kind}`, () => {
    let server;
    let url;
    test.before(async () => {
      server = await servers.start(kind);
      const recipe = readmeRecipe();
      assert.equal(await server.call(...recipe), 'OK');
      const user = recipe[2];
      const password = recipe.find((a) => a.startsWith('>')).slice(1);
      url = `redis://${user}:${password}@127.0.0.1:${server.port}`;
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
          assert.equal(await limiter.ready(), 'module');
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
        } finally {
          await conn.close();
        }
      });
    }
  });
}
