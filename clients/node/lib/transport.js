'use strict';
// One way to send a raw command, whatever the client: node-redis v4/v5
// (standalone or createCluster), ioredis (Redis or Cluster), or the
// `sendCommand` / `sendCommandCluster` functions rate-limit-redis takes.
//
// A transport has:
//   send(key, args, readonly) -> Promise<reply>   routed by `key` in Cluster
//   keyless(args)             -> Promise<reply>   any node
//   primaries()               -> Promise<[transport]> every primary (Cluster), or [this]
const path = require('path');
const { createRequire } = require('module');

// Peer packages resolve as Node resolves them for this package: from its
// own folder first (installed from the tarball it sits in the application's
// node_modules, beside them). Installed as a link (`npm install
// ./clients/node`), its own folder is the checkout, so the application's
// entry script and then the working directory are tried next: a second
// copy of rate-limiter-flexible has another RateLimiterRes (instanceof
// fails). `require.main` is unset when the entry is an ES module, hence
// process.argv[1]; the working directory can be anywhere (`cd / && node
// /app/app.mjs`), hence last.
function requirePeer(name) {
  const bases = [__filename];
  if (require.main && require.main.filename) bases.push(require.main.filename);
  if (process.argv[1]) bases.push(path.resolve(process.argv[1]));
  bases.push(path.join(process.cwd(), 'index.js'));
  let missing;
  for (const base of bases) {
    try {
      return createRequire(base)(name);
    } catch (err) {
      if (err.code !== 'MODULE_NOT_FOUND') throw err;
      missing = missing || err;
    }
  }
  throw missing; // index.js turns it into "RateLimiterRl needs ..."
}

function isIoredis(client) {
  return typeof client.call === 'function' && typeof client.pipeline === 'function';
}

function isNodeRedisCluster(client) {
  return typeof client.sendCommand === 'function' && typeof client.nodeClient === 'function' && 'masters' in client;
}

function ioredisKeyPrefix(client) {
  const options = client.options || {};
  return options.keyPrefix || (options.redisOptions && options.redisOptions.keyPrefix) || '';
}

function fromClient(client) {
  if (!client || typeof client !== 'object') {
    throw new TypeError('rl-stores: storeClient must be a node-redis or ioredis client');
  }
  if (isIoredis(client)) {
    if (ioredisKeyPrefix(client)) {
      // ioredis prefixes the keys of the commands it knows (FCALL) and not
      // of the others (RL.*): the two editions would use different keys.
      throw new Error('rl-stores: the ioredis keyPrefix option is not supported; use the limiter\'s keyPrefix (or the store\'s prefix) instead');
    }
    return client.isCluster ? ioredisCluster(client) : ioredisStandalone(client);
  }
  if (isNodeRedisCluster(client)) return nodeRedisCluster(client);
  if (typeof client.sendCommand === 'function') return nodeRedisStandalone(client);
  throw new TypeError('rl-stores: storeClient must be a node-redis (v4, v5) or ioredis client');
}

function nodeRedisStandalone(client) {
  const t = {
    send: (key, args) => client.sendCommand(args),
    keyless: (args) => client.sendCommand(args),
    primaries: async () => [t],
  };
  return t;
}

function nodeRedisCluster(cluster) {
  return {
    send: (key, args, readonly) => cluster.sendCommand(key, Boolean(readonly), args),
    keyless: (args) => cluster.sendCommand(undefined, true, args),
    primaries: async () =>
      cluster.masters.map((master) => {
        const node = async () => cluster.nodeClient(master);
        return {
          keyless: async (args) => (await node()).sendCommand(args),
          send: async (key, args) => (await node()).sendCommand(args),
          primaries: async () => [],
        };
      }),
  };
}

function ioredisStandalone(client) {
  const t = {
    send: (key, args) => client.call(...args),
    keyless: (args) => client.call(...args),
    primaries: async () => [t],
  };
  return t;
}

function ioredisCluster(cluster) {
  // ioredis routes a command by the keys it knows for that command name; it
  // knows none for RL.*, so the key is given to the command here (else every
  // call would go to a random node and follow a MOVED: two round trips).
  const { Command } = requirePeer('ioredis');
  return {
    send: (key, args) => {
      const command = new Command(args[0], args.slice(1), { replyEncoding: 'utf8' });
      command.keys = [key];
      cluster.sendCommand(command);
      return command.promise;
    },
    keyless: (args) => cluster.call(...args),
    primaries: async () => cluster.nodes('master').map((node) => ioredisStandalone(node)),
  };
}

// rate-limit-redis's options: `sendCommand(...args)` for one server,
// `sendCommandCluster({ key, isReadOnly, command })` for a cluster.
function fromSendCommand(options) {
  const hasPlain = typeof options.sendCommand === 'function';
  const hasCluster = typeof options.sendCommandCluster === 'function';
  if (hasPlain === hasCluster) {
    throw new Error('rl-stores: options must include either sendCommand or sendCommandCluster (but not both)');
  }
  if (hasPlain) {
    const send = options.sendCommand;
    const t = {
      send: (key, args) => send(...args),
      keyless: (args) => send(...args),
      primaries: async () => [t],
    };
    return t;
  }
  const send = options.sendCommandCluster;
  const t = {
    send: (key, args, readonly) => send({ key, isReadOnly: Boolean(readonly), command: args }),
    keyless: (args) => send({ key: undefined, isReadOnly: true, command: args }),
    // The function only reaches the node of a key: FUNCTION LOAD goes to one.
    primaries: async () => [t],
  };
  return t;
}

module.exports = { fromClient, fromSendCommand, requirePeer };
