'use strict';
// rate-limiter-flexible's documented recipes as Express apps over HTTP, run
// with RateLimiterRedis on a plain server and with RateLimiterRl on each
// edition in the same run: the same statuses, the same password checks,
// the same Retry-After.
//   - the wiki's "Login endpoint protection": get() before the password
//     check, refused when consumedPoints > points; consume() after a wrong
//     password; delete() after a right one; per IP per day and per
//     username+IP;
//   - "block after N failures": a middleware consume() with blockDuration;
//   - inMemoryBlockOnConsumed: the in-memory block, after which the server
//     sees no command.
const test = require('node:test');
const assert = require('node:assert/strict');
const { RateLimiterRedis } = require('rate-limiter-flexible');
const { RateLimiterRl } = require('rl-stores');
const servers = require('./helpers/servers');
const { connect } = require('./helpers/clients');

const express = require('express5');

// The app on a free loopback port; send(path, body, ip) returns [status, Retry-After].
async function serve(app) {
  app.use((err, req, res, next) => res.status(500).send(String(err && err.message)));
  const http = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const base = `http://127.0.0.1:${http.address().port}`;
  return {
    send: async (path, { body, ip = '203.0.113.7' } = {}) => {
      const res = await fetch(base + path, {
        method: body ? 'POST' : 'GET',
        headers: { 'content-type': 'application/json', 'x-client-ip': ip },
        body: body && JSON.stringify(body),
      });
      await res.text();
      return [res.status, res.headers.get('retry-after')];
    },
    close: () => new Promise((resolve) => http.close(resolve)),
  };
}

const USERS = { alice: 'right-horse', carol: 'battery-staple' };

// The wiki's login route, as written there, with the client IP from a header.
function loginApp({ byIP, byUserIP, maxByIP, maxConsecutive }) {
  const app = express();
  app.use(express.json());
  const checks = { count: 0 };
  app.post('/login', async (req, res, next) => {
    try {
      const ip = req.get('x-client-ip');
      const userIPkey = `${req.body.email}_${ip}`;
      const [resUserIP, resIP] = await Promise.all([byUserIP ? byUserIP.get(userIPkey) : null, byIP.get(ip)]);
      let retrySecs = 0;
      if (resIP !== null && resIP.consumedPoints > maxByIP) {
        retrySecs = Math.round(resIP.msBeforeNext / 1000) || 1;
      } else if (resUserIP !== null && resUserIP.consumedPoints > maxConsecutive) {
        retrySecs = Math.round(resUserIP.msBeforeNext / 1000) || 1;
      }
      if (retrySecs > 0) {
        res.set('Retry-After', String(retrySecs));
        return res.status(429).send('Too Many Requests');
      }
      checks.count++;
      const exists = req.body.email in USERS;
      if (USERS[req.body.email] !== req.body.password) {
        try {
          const promises = [byIP.consume(ip)];
          if (exists && byUserIP) promises.push(byUserIP.consume(userIPkey));
          await Promise.all(promises);
          return res.status(400).send('email or password is wrong');
        } catch (rejected) {
          if (rejected instanceof Error) throw rejected;
          res.set('Retry-After', String(Math.round(rejected.msBeforeNext / 1000) || 1));
          return res.status(429).send('Too Many Requests');
        }
      }
      if (byUserIP && resUserIP !== null && resUserIP.consumedPoints > 0) await byUserIP.delete(userIPkey);
      return res.send('authorized');
    } catch (err) {
      return next(err);
    }
  });
  return { app, checks };
}

// A middleware that consumes a point per request, as the README's Express example.
function middlewareApp(limiter) {
  const app = express();
  app.use((req, res, next) => {
    limiter
      .consume(req.get('x-client-ip'))
      .then(() => next())
      .catch((rejected) => {
        if (rejected instanceof Error) return next(rejected);
        res.set('Retry-After', String(Math.round(rejected.msBeforeNext / 1000) || 1));
        return res.status(429).send('Too Many Requests');
      });
  });
  app.get('/', (req, res) => res.send('ok'));
  return app;
}

const wrong = (email) => ({ email, password: 'guess' });
const right = (email) => ({ email, password: USERS[email] });

const RECIPES = {
  // The case: 10 wrong passwords, then the right one, on one limiter.
  'login, per IP per day with a block': async (make) => {
    const byIP = make({ keyPrefix: 'login_fail_ip_per_day', points: 3, duration: 86400, blockDuration: 600 });
    const { app, checks } = loginApp({ byIP, maxByIP: 3 });
    const http = await serve(app);
    try {
      const out = [];
      for (let i = 0; i < 10; i++) out.push(await http.send('/login', { body: wrong('alice') }));
      out.push(await http.send('/login', { body: right('alice') }));
      return { out, checks: checks.count };
    } finally {
      await http.close();
    }
  },
  // Both limiters of the wiki: consecutive fails per username+IP, and per IP per day.
  'login, per username+IP and per IP': async (make) => {
    const byIP = make({ keyPrefix: 'login_fail_ip_per_day', points: 6, duration: 86400, blockDuration: 86400 });
    const byUserIP = make({ keyPrefix: 'login_fail_consecutive_username_and_ip', points: 3, duration: 86400 * 90, blockDuration: 3600 });
    const { app, checks } = loginApp({ byIP, byUserIP, maxByIP: 6, maxConsecutive: 3 });
    const http = await serve(app);
    try {
      const out = [];
      // Two wrong, then right: the consecutive count is deleted.
      for (const body of [wrong('alice'), wrong('alice'), right('alice')]) out.push(await http.send('/login', { body }));
      // Five wrong for alice: blocked for her from this IP after the fourth.
      for (let i = 0; i < 5; i++) out.push(await http.send('/login', { body: wrong('alice') }));
      out.push(await http.send('/login', { body: right('alice') }));
      // Carol from the same IP until the IP's day limit blocks everyone on it.
      for (let i = 0; i < 3; i++) out.push(await http.send('/login', { body: wrong('carol') }));
      out.push(await http.send('/login', { body: right('carol') }));
      // Alice from another IP is not blocked.
      out.push(await http.send('/login', { body: right('alice'), ip: '198.51.100.2' }));
      return { out, checks: checks.count };
    } finally {
      await http.close();
    }
  },
  'block after N failures (blockDuration)': async (make) => {
    const limiter = make({ keyPrefix: 'api', points: 5, duration: 60, blockDuration: 120 });
    const http = await serve(middlewareApp(limiter));
    try {
      const out = [];
      for (let i = 0; i < 8; i++) out.push(await http.send('/'));
      const got = await limiter.get('203.0.113.7');
      return { out, over: got.consumedPoints > 5, remaining: got.remainingPoints, retry: Math.round(got.msBeforeNext / 1000) };
    } finally {
      await http.close();
    }
  },
  'inMemoryBlockOnConsumed': async (make, server) => {
    const limiter = make({ keyPrefix: 'mem', points: 5, duration: 60, inMemoryBlockOnConsumed: 8, inMemoryBlockDuration: 30 });
    const http = await serve(middlewareApp(limiter));
    try {
      const out = [];
      for (let i = 0; i < 8; i++) out.push(await http.send('/'));
      // Blocked in memory from the eighth on: the next requests reach no server.
      const m = await server.monitor();
      for (let i = 0; i < 4; i++) out.push(await http.send('/'));
      const seen = await m.settle();
      m.close();
      return { out, commandsWhileBlocked: seen.length };
    } finally {
      await http.close();
    }
  },
};

// Retry-After in whole seconds: the two clocks may round a second apart.
function assertSameAnswers(ours, theirs, name) {
  const strip = (r) => ({ ...r, out: r.out.map(([status]) => status) });
  assert.deepEqual(strip(ours), strip(theirs), name);
  ours.out.forEach(([, retry], i) => {
    const other = theirs.out[i][1];
    assert.ok(retry === other || Math.abs(Number(retry) - Number(other)) <= 1, `${name}: request ${i} Retry-After ${retry}, RateLimiterRedis ${other}`);
  });
}

test.describe("rate-limiter-flexible's recipes: RateLimiterRl answers as RateLimiterRedis", () => {
  const started = {};
  const conns = {};
  test.before(async () => {
    for (const kind of ['valkey9-bare', 'redis7', 'valkey9']) {
      started[kind] = await servers.start(kind);
      conns[kind] = await connect('ioredis', started[kind].url);
    }
  });
  test.after(async () => {
    for (const c of Object.values(conns)) await c.close();
    for (const s of Object.values(started)) await s.stop();
  });

  for (const [name, recipe] of Object.entries(RECIPES)) {
    test(name, async () => {
      // Each recipe from empty servers: the recipes share their keyPrefixes.
      for (const s of Object.values(started)) await s.call('FLUSHALL');
      const theirs = await recipe((o) => new RateLimiterRedis({ storeClient: conns['valkey9-bare'].client, ...o }), started['valkey9-bare']);
      for (const kind of ['redis7', 'valkey9']) {
        const ours = await recipe((o) => new RateLimiterRl({ storeClient: conns[kind].client, ...o }), started[kind]);
        assertSameAnswers(ours, theirs, `${name} on ${kind}`);
      }
      if (name.startsWith('login, per IP')) {
        // The numbers: 4 checks, 6 turned away before any check, the right password refused.
        assert.equal(theirs.checks, 4);
        assert.deepEqual(theirs.out.map(([s]) => s), [400, 400, 400, 429, 429, 429, 429, 429, 429, 429, 429]);
      }
      if (name === 'inMemoryBlockOnConsumed') assert.equal(theirs.commandsWhileBlocked, 0);
    });
  }
});
