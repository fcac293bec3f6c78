// Asks each Node library for the script call it makes on one hit, through a
// recording client in place of a Redis connection, and writes each as
// <out>/<row>.lua (the script, as the library sends it) and <out>/<row>.args
// (numkeys, keys, arguments, one a line). Nothing is copied by hand: the
// scripts are the libraries' own strings, read from the installed packages.
//   node benches/peers/node_calls.js <node_modules dir> <out dir>
'use strict';
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');

const [modules, out] = process.argv.slice(2);
const load = (name) => require(path.join(path.resolve(modules), name));
// The benchmark's placeholder: redis-benchmark puts a random number in
// place of it in every key, so each row runs over the same keyspace.
const ID = '__rand_int__';

function write(row, script, keys, args) {
  fs.writeFileSync(path.join(out, `${row}.lua`), script);
  const words = [String(keys.length), ...keys, ...args].map(String);
  for (const w of words) {
    if (/\s/.test(w) || w === '') throw new Error(`${row}: argument ${JSON.stringify(w)} cannot go on a benchmark line`);
  }
  fs.writeFileSync(path.join(out, `${row}.args`), words.join('\n') + '\n');
}

// rate-limiter-flexible's RateLimiterRedis on an ioredis-shaped client: it
// defines its script with defineCommand (ioredis sends it as EVALSHA) and
// calls it on each consume.
async function rateLimiterFlexible() {
  const { RateLimiterRedis } = load('rate-limiter-flexible');
  const seen = {};
  const client = {
    status: 'ready',
    defineCommand(name, { lua }) {
      seen.lua = lua;
      this[name] = async (argv) => {
        seen.argv = argv;
        return [1, 60000];
      };
    },
  };
  const limiter = new RateLimiterRedis({ storeClient: client, points: 100, duration: 60 });
  await limiter.consume(ID);
  const [key, ...args] = seen.argv;
  write('rlf_redis', seen.lua, [key], args);
}

// @upstash/ratelimit: EVALSHA first, the script itself on NOSCRIPT.
async function upstash(row, limiter, reply) {
  const { Ratelimit } = load('@upstash/ratelimit');
  const seen = {};
  const redis = {
    async evalsha() {
      throw new Error('NOSCRIPT No matching script');
    },
    async eval(script, keys, args) {
      Object.assign(seen, { script, keys, args });
      return reply;
    },
  };
  const rl = new Ratelimit({ redis, limiter: limiter(Ratelimit), analytics: false, ephemeralCache: false });
  await rl.limit(ID);
  write(row, seen.script, seen.keys, seen.args);
}

// rate-limit-redis (express-rate-limit's Redis store): SCRIPT LOAD at
// start, then EVALSHA per hit through the user's sendCommand.
async function rateLimitRedis() {
  const { RedisStore } = load('rate-limit-redis');
  const scripts = {};
  let call;
  const sendCommand = async (...command) => {
    if (command[0] === 'SCRIPT') {
      const sha = crypto.createHash('sha1').update(command[2]).digest('hex');
      scripts[sha] = command[2];
      return sha;
    }
    call = command;
    return [1, 60000];
  };
  const store = new RedisStore({ sendCommand });
  store.init({ windowMs: 60000 });
  await store.increment(ID);
  const [name, sha, numkeys, ...rest] = call;
  if (name !== 'EVALSHA') throw new Error(`rate-limit-redis sent ${name}`);
  const n = Number(numkeys);
  write('rlr_express', scripts[sha], rest.slice(0, n), rest.slice(n));
}

(async () => {
  await rateLimiterFlexible();
  // limit 100 per 60 s, as the rl rows.
  await upstash('upstash_sliding', (R) => R.slidingWindow(100, '60 s'), [99, 100]);
  // One token every 36 s into a bucket of 11: the rate and burst of
  // rl_throttle's row (max_burst 10, 100 per hour).
  await upstash('upstash_token', (R) => R.tokenBucket(1, '36 s', 11), [10, 0, 11]);
  await rateLimitRedis();
})().catch((e) => {
  console.error(`benches/peers/node_calls.js: ${e.stack || e}`);
  process.exit(1);
});
