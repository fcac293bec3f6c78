'use strict';
// rl-stores: rl's windows behind the rate limiters Node apps already use.
// Each export loads its framework's package only when first used, so an app
// with only one of them installed needs only that one.
const { libraryPath, RlNotLoadedError } = require('./lib/edition');

Object.defineProperty(exports, 'RateLimiterRl', {
  enumerable: true,
  get: () => require('./lib/flexible').RateLimiterRl,
});
Object.defineProperty(exports, 'RlStore', {
  enumerable: true,
  get: () => require('./lib/express').RlStore,
});
exports.libraryPath = libraryPath;
exports.RlNotLoadedError = RlNotLoadedError;
// The names of the stores they replace, so switching is changing the import:
// `const { RedisStore } = require('rl-stores')` for rate-limit-redis's.
Object.defineProperty(exports, 'RedisStore', { enumerable: true, get: () => exports.RlStore });
Object.defineProperty(exports, 'RateLimiterRedis', { enumerable: true, get: () => exports.RateLimiterRl });
