'use strict';
// Cluster through the clients' own cluster modes: node-redis createCluster,
// ioredis Cluster, and rate-limit-redis's sendCommandCluster; three
// primaries of Redis 7.0 with the module, or of Valkey 9.1 with the library.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('fs');
const Redis = require('ioredis');
const { RateLimiterRes } = require('rate-limiter-flexible');
const { RateLimiterRl, RlStore } = require('rl-stores');
const servers = require('./helpers/servers');
const { libraryRecipe, clusterGrants, credentials } = require('./helpers/recipes');

const SUBJECTS = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank'];

// auth: { username, password } to connect as an ACL user.
async function clusterClient(kind, cluster, auth) {
  if (kind === 'ioredis') {
    const client = new Redis.Cluster(cluster.rootNodes, { lazyConnect: true, ...(auth ? { redisOptions: auth } : {}) });
    client.on('error', () => {});
    await client.connect();
    return {
      client,
      sendCommandCluster: ({ key, command }) => {
        const c = new Redis.Command(command[0], command.slice(1), { replyEncoding: 'utf8' });
        if (key !== undefined) c.keys = [key];
        client.sendCommand(c);
        return c.promise;
      },
      close: () => client.disconnect(),
    };
  }
  const { createCluster } = require(kind);
  const client = createCluster({
    rootNodes: cluster.rootNodes.map((n) => ({ url: `redis://${n.host}:${n.port}` })),
    ...(auth ? { defaults: auth } : {}),
  });
  client.on('error', () => {});
  await client.connect();
  return {
    client,
    // rate-limit-redis's README form.
    sendCommandCluster: ({ key, isReadOnly, command }) => client.sendCommand(key, isReadOnly, command),
    close: () => (typeof client.close === 'function' ? client.close() : client.disconnect()),
  };
}

// MOVED replies the primaries gave so far.
async function moved(cluster) {
  let n = 0;
  for (const node of cluster.nodes) {
    const m = (await node.call('INFO', 'errorstats')).match(/errorstat_MOVED:count=(\d+)/);
    if (m) n += Number(m[1]);
  }
  return n;
}

// A key's slot, as the server computes it.
async function slotOf(cluster, key) {
  return cluster.nodes[0].call('CLUSTER', 'KEYSLOT', key);
}

for (const kind of ['redis7', 'valkey9']) {
  test.describe(`a cluster of ${kind}`, () => {
    let cluster;
    test.before(async () => {
      cluster = await servers.startCluster(kind);
    });
    test.after(async () => {
      if (cluster) await cluster.stop();
    });

    for (const client of ['redis4', 'redis5', 'ioredis']) {
      test(`${client}: RateLimiterRl admits exactly points per key, keys spread over the primaries, and blocks`, async () => {
        const conn = await clusterClient(client, cluster);
        try {
          const limiter = new RateLimiterRl({ storeClient: conn.client, points: 3, duration: 60, blockDuration: 60, keyPrefix: `c-${client}` });
          assert.equal(await limiter.ready(), kind === 'redis7' ? 'module' : 'functions');
          const slots = new Set();
          for (const subject of SUBJECTS) {
            slots.add(Math.floor((await slotOf(cluster, `rl:flx:c-${client}:${subject}`)) / Math.ceil(16384 / 3)));
            const outcomes = [];
            for (let i = 0; i < 5; i++) {
              outcomes.push(await limiter.consume(subject).then(() => true, (e) => {
                if (!(e instanceof RateLimiterRes)) throw e;
                return false;
              }));
            }
            assert.deepEqual(outcomes, [true, true, true, false, false], subject);
          }
          assert.ok(slots.size > 1, 'the subjects live on more than one primary');
          // The last two rejections: the block (60 s), then blocked.
          await assert.rejects(limiter.consume('alice'), (e) => e instanceof RateLimiterRes && e.msBeforeNext > 50000);
          assert.equal((await limiter.get('alice')).remainingPoints, 0);
          assert.equal(await limiter.delete('alice'), true);
          assert.equal((await limiter.consume('alice')).remainingPoints, 2);
          // Routed to each key's primary at once: one command per hit over
          // the whole cluster, and no MOVED (a redirected command never runs,
          // so MONITOR would not show it; the server's error count does).
          const movedBefore = await moved(cluster);
          const monitors = await Promise.all(cluster.nodes.map((node) => node.monitor()));
          for (const subject of SUBJECTS) await limiter.consume(`${subject}-2`);
          const seen = (await Promise.all(monitors.map((m) => m.settle()))).flat();
          monitors.forEach((m) => m.close());
          assert.equal(seen.length, SUBJECTS.length, seen.join(' | '));
          assert.equal(await moved(cluster), movedBefore);
          // One key per limit, the block in it: any key name works in Cluster.
          assert.equal((await limiter.consume('a}b')).remainingPoints, 2);
        } finally {
          await conn.close();
        }
      });

      if (kind === 'valkey9') {
        // docs/operations.md's recipes as written, on every node: the
        // library's commands, and what this cluster client asks at connect.
        test(`${client}: both adapters as the library recipe's user with its client's cluster grants`, async () => {
          const recipe = libraryRecipe();
          const grants = clusterGrants(client.startsWith('redis') ? 'node-redis' : 'ioredis');
          const auth = credentials(recipe);
          for (const node of cluster.nodes) {
            assert.equal(await node.call(...recipe), 'OK');
            assert.equal(await node.call('ACL', 'SETUSER', auth.username, ...grants), 'OK');
            await node.call('ACL', 'LOG', 'RESET');
          }
          const conn = await clusterClient(client, cluster, auth);
          try {
            const limiter = new RateLimiterRl({ storeClient: conn.client, points: 2, duration: 60, keyPrefix: `acl-${client}` });
            assert.equal(await limiter.ready(), 'functions');
            for (const subject of SUBJECTS) {
              assert.equal((await limiter.consume(subject)).remainingPoints, 1);
              assert.equal((await limiter.consume(subject)).remainingPoints, 0);
              await assert.rejects(limiter.consume(subject), (e) => e instanceof RateLimiterRes);
            }
            assert.equal(await limiter.delete('alice'), true);
            const store = new RlStore({ sendCommandCluster: conn.sendCommandCluster, prefix: `rl:acl-${client}:` });
            await store.init({ windowMs: 60000 });
            for (const subject of SUBJECTS) assert.equal((await store.increment(subject)).totalHits, 1);
            await store.resetKey('alice');
          } finally {
            await conn.close();
            for (const node of cluster.nodes) await node.call('ACL', 'DELUSER', auth.username);
          }
          // Refused along the way: only what the clients go on without.
          for (const node of cluster.nodes) {
            const log = await node.call('ACL', 'LOG');
            const refused = log.map((entry) => entry[entry.indexOf('object') + 1]);
            for (const r of refused) assert.ok(['client|setinfo', 'client|setname', 'info'].includes(r), `${node.port} refused ${r}`);
          }
        });
      }

      test(`${client}: RlStore with sendCommandCluster counts each key on its own primary`, async () => {
        const conn = await clusterClient(client, cluster);
        try {
          const store = new RlStore({ sendCommandCluster: conn.sendCommandCluster, prefix: `s-${client}:` });
          await store.init({ windowMs: 60000 });
          const movedBefore = await moved(cluster);
          for (const subject of SUBJECTS) {
            const hits = [];
            for (let i = 0; i < 3; i++) hits.push((await store.increment(subject)).totalHits);
            assert.deepEqual(hits, [1, 2, 3], subject);
            await store.decrement(subject);
            assert.equal((await store.get(subject)).totalHits, 2);
          }
          // Each command went to its key's primary (no MOVED).
          assert.equal(await moved(cluster), movedBefore);
        } finally {
          await conn.close();
        }
      });
    }
  });
}

test('loadFunctions loads the library on every primary of a cluster', async () => {
  for (const client of ['redis5', 'ioredis']) {
    const cluster = await servers.startCluster('valkey9-bare');
    const conn = await clusterClient(client, cluster);
    try {
      const limiter = new RateLimiterRl({ storeClient: conn.client, points: 1, duration: 60, loadFunctions: true });
      assert.equal(await limiter.ready(), 'functions');
      const code = fs.readFileSync(servers.LIBRARY, 'utf8');
      for (const node of cluster.nodes) {
        const [[, name, , , , , , loaded]] = await node.call('FUNCTION', 'LIST', 'WITHCODE');
        assert.equal(name, 'rl', `${client}: port ${node.port}`);
        assert.equal(loaded, code);
      }
      for (const subject of SUBJECTS) assert.equal((await limiter.consume(subject)).remainingPoints, 0);
    } finally {
      await conn.close();
      await cluster.stop();
    }
  }
});
