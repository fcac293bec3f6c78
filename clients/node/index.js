'use strict';
// rl-stores: rl's windows behind the rate limiters Node apps already use.
// Plain `exports.X =` assignments, so `import { RateLimiterRl } from
// 'rl-stores'` works from ES modules too.
const { libraryPath, RlNotLoadedError } = require('./lib/edition');

// RateLimiterRl extends rate-limiter-flexible's store base, so it needs that
// package; an app using only the express-rate-limit store does not.
function needsPeer(load, name, peer) {
  try {
    return load();
  } catch (err) {
    if (err.code !== 'MODULE_NOT_FOUND' || !String(err.message).includes(`'${peer}`)) throw err;
    return class {
      constructor() {
        throw new Error(`rl-stores: ${name} needs ${peer} (npm install ${peer})`);
      }
    };
  }
}

exports.RateLimiterRl = needsPeer(() => require('./lib/flexible').RateLimiterRl, 'RateLimiterRl', 'rate-limiter-flexible');
exports.RlStore = require('./lib/express').RlStore;
// The names of the stores they replace, so switching is changing the import
// (`import { RedisStore } from 'rl-stores'` for rate-limit-redis's).
exports.RedisStore = exports.RlStore;
exports.RateLimiterRedis = exports.RateLimiterRl;
exports.libraryPath = libraryPath;
exports.RlNotLoadedError = RlNotLoadedError;
