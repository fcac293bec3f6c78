'use strict';
// The clients under test, connected to a test server: node-redis v4 and v5
// (installed as the aliases redis4 and redis5; v5 also over RESP3) and ioredis 5. Each gives the
// client itself and the sendCommand function rate-limit-redis's README
// shows for it.
const CLIENTS = ['redis4', 'redis5', 'redis5-resp3', 'ioredis'];

async function connect(kind, url) {
  if (kind === 'ioredis') {
    const Redis = require('ioredis');
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

module.exports = { CLIENTS, connect };
