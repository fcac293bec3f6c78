'use strict';
// The clients under test, connected to a test server: node-redis v4, v5 and
// v6 (installed as the aliases redis4, redis5, redis6; v5 also over RESP3)
// and ioredis 6 (the package `ioredis`, what npm installs today) and 5 (the
// alias ioredis5). Each gives the client itself and the sendCommand
// function rate-limit-redis's README shows for it.
const CLIENTS = ['redis4', 'redis5', 'redis5-resp3', 'redis6', 'ioredis', 'ioredis5'];

async function connect(kind, url) {
  if (kind.startsWith('ioredis')) {
    const Redis = require(kind);
    const client = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true });
    client.on('error', () => {});
    await client.connect();
    return {
      client,
      sendCommand: (command, ...args) => client.call(command, ...args),
      close: () => client.disconnect(),
    };
  }
  const resp3 = kind.endsWith('-resp3');
  const { createClient } = require(resp3 ? kind.slice(0, -'-resp3'.length) : kind);
  // No reconnection: a test that stops the server wants the error, now.
  const client = createClient({ url, socket: { reconnectStrategy: false }, ...(resp3 ? { RESP: 3 } : {}) });
  client.on('error', () => {});
  await client.connect();
  return {
    client,
    sendCommand: (...args) => client.sendCommand(args),
    close: async () => {
      try {
        await (typeof client.destroy === 'function' ? client.destroy() : client.disconnect());
      } catch {
        // already closed
      }
    },
  };
}

// For a test.describe: a server of `kind` and a connection of every client
// to it, started before the suite's tests and stopped after. `server`
// stands for the started one (a proxy, since it starts later).
function suiteServer(kind) {
  const test = require('node:test');
  const servers = require('./servers');
  let started;
  const conns = {};
  test.before(async () => {
    started = await servers.start(kind);
    for (const c of CLIENTS) conns[c] = await connect(c, started.url);
  });
  test.after(async () => {
    for (const c of Object.values(conns)) await c.close();
    if (started) await started.stop();
  });
  const server = new Proxy({}, { get: (_, name) => started[name] });
  return { server, conns };
}

module.exports = { CLIENTS, connect, suiteServer };
