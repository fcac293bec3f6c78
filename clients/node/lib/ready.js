'use strict';
// Whether a client is connected and ready to send now, for
// RateLimiterRedis's rejectIfRedisNotReady: an unready client fails the call
// at once (the insurance limiter answers, if any) instead of queueing it
// while the client reconnects.

function isClientReady(client, key) {
  // ioredis, Redis and Cluster: 'ready' only once connected (and, for a
  // cluster, once it knows the slots).
  if (typeof client.status === 'string') return client.status === 'ready';
  // node-redis v4+ cluster: open, and the node that serves the key ready.
  if ('masters' in client && typeof client.nodeClient === 'function') {
    if (client.isOpen === false) return false;
    const slots = client._slots;
    if (slots && typeof slots.getClient === 'function') {
      try {
        const node = slots.getClient(key, false);
        return Boolean(node) && node.isReady !== false;
      } catch {
        return false;
      }
    }
    return client.isOpen !== false;
  }
  // node-redis v4+ client.
  if (typeof client.isReady === 'boolean') return client.isReady;
  return true;
}

module.exports = { isClientReady };
