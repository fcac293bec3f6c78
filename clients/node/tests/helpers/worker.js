'use strict';
// One of the processes sharing a limit: `node worker.js <flexible|express>
// <url> <client> <limit> <tries>`; waits for "go" on stdin so all start
// together, then prints how many of its hits were admitted.
const { RateLimiterRl, RlStore } = require('rl-stores');
const { connect } = require('./clients');

const [mode, url, clientKind, limitText, triesText] = process.argv.slice(2);
const limit = Number(limitText);
const tries = Number(triesText);

(async () => {
  const conn = await connect(clientKind, url);
  let hit;
  if (mode === 'flexible') {
    const limiter = new RateLimiterRl({ storeClient: conn.client, points: limit, duration: 600, keyPrefix: 'shared' });
    await limiter.ready();
    hit = () => limiter.consume('user').then(() => true, (e) => {
      if (e instanceof Error) throw e;
      return false;
    });
  } else {
    const store = new RlStore({ sendCommand: conn.sendCommand, prefix: 'shared:' });
    await store.init({ windowMs: 600000 });
    // express-rate-limit's rule: a hit passes while totalHits <= limit.
    hit = async () => (await store.increment('ip')).totalHits <= limit;
  }
  process.stdout.write('ready\n');
  await new Promise((resolve) => process.stdin.once('data', resolve));
  let admitted = 0;
  for (let i = 0; i < tries; i++) if (await hit()) admitted++;
  process.stdout.write(`${JSON.stringify({ admitted })}\n`);
  await conn.close();
  process.exit(0);
})().catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exit(1);
});
