'use strict';
// RateLimiterRedis's options and inputs, as RateLimiterRl takes them: each
// one is honoured or refused at construction (or at the call) with a message
// naming it. None is accepted and ignored.

const LIMITERS = {
  // RL.SLIDE: the exact log; a member per unit, hence COST at most 100.
  slide: { name: 'SLIDE', maxPoints: 1e6, maxCost: 100 },
  // RL.BUCKETS: a bucketed window in bounded memory; any cost up to the limit.
  buckets: { name: 'BUCKETS', maxPoints: 1e15, maxCost: 1e15 },
};

// rl's longest window and block, 10^12 ms (about 31.7 years), stands for
// rate-limiter-flexible's "never expires" (duration 0, block(key, 0)). A
// finite duration or block may be at most 10^11 ms (about 3.2 years), so
// any wait above that is one of those and is answered as RateLimiterRedis
// answers a key without a TTL: msBeforeNext -1.
const FOREVER_MS = 1e12;
const MAX_FINITE_MS = 1e11;

// A window (or block) in ms for rl: 0 is forever.
function windowMs(ms, name = 'duration') {
  if (!(ms > 0)) return FOREVER_MS;
  const w = Math.ceil(ms);
  if (w > MAX_FINITE_MS) {
    throw new RangeError(`rl-stores: ${name} must be at most ${MAX_FINITE_MS / 1000} s (0 for never expires)`);
  }
  return w;
}

// What rate-limiter-flexible reports for a wait: -1 for "never".
const waitOf = (ms) => (ms > MAX_FINITE_MS ? -1 : ms);

// The points of one call, as RateLimiterRedis takes them: an integer (0
// reads, a negative number gives back), or a string of digits.
function pointsOf(points) {
  if (typeof points === 'string') {
    if (!/^[1-9][0-9]*$/.test(points)) {
      throw new Error('Consuming string different than integer values is not supported by this package');
    }
    return Number(points);
  }
  if (!Number.isInteger(points)) throw new Error('Consuming decimal number of points is not supported by this package');
  return points;
}

// rl's keys live under `rl:` so that they never collide with a
// RateLimiterRedis counter left under the same keyPrefix (a switch would
// answer WRONGTYPE on it until it expired, never with duration 0) and so
// that the README's ACL recipe (`~rl:*`) covers them: keyPrefix 'login'
// keys `rl:flx:login:<key>`. A keyPrefix that already starts with `rl:` is
// used as it is (rl-stores 1.0's default, `rl:flx`, among them).
const DEFAULT_PREFIX = 'rl:flx';

function keyPrefixOf(keyPrefix) {
  if (keyPrefix === undefined || keyPrefix === '') return DEFAULT_PREFIX;
  if (typeof keyPrefix !== 'string') throw new Error('keyPrefix must be string');
  return keyPrefix.startsWith('rl:') ? keyPrefix : `${DEFAULT_PREFIX}:${keyPrefix}`;
}

// RateLimiterRedis options that rl cannot honour: refused by name.
const REFUSED = {
  customIncrTtlLuaScript:
    "rl-stores: customIncrTtlLuaScript is not supported: rl decides in its own command (RL.SLIDE or RL.BUCKETS), not in RateLimiterRedis's script; remove the option, or keep RateLimiterRedis for this limiter",
  useRedis3AndLowerPackage:
    'rl-stores: useRedis3AndLowerPackage is not supported: node-redis 3 and older are not supported; use node-redis 4+ or ioredis',
};

// Checks what RateLimiterRl adds to rate-limiter-flexible's own checks;
// returns the limiter ('slide' or 'buckets').
function checkOptions(opts) {
  for (const [name, text] of Object.entries(REFUSED)) {
    if (opts[name] !== undefined && opts[name] !== false) throw new Error(text);
  }
  const name = opts.limiter === undefined ? 'slide' : opts.limiter;
  const limiter = LIMITERS[name];
  if (!limiter) throw new Error("rl-stores: limiter must be 'slide' or 'buckets'");
  const p = opts.points;
  if (!Number.isInteger(p) || p < 1 || p > limiter.maxPoints) {
    throw new RangeError(
      `rl-stores: points must be an integer from 1 to ${limiter.maxPoints} for limiter '${name}', got ${p} ` +
        '(rl has no limit of 0, below 0 or of a fraction; RateLimiterRedis takes them)'
    );
  }
  if (opts.precision !== undefined && limiter.name !== 'BUCKETS') {
    throw new Error("rl-stores: precision applies to limiter 'buckets' only");
  }
  windowMs((opts.duration || 0) * 1000, 'duration');
  if (opts.blockDuration > 0) windowMs(opts.blockDuration * 1000, 'blockDuration');
  return limiter;
}

module.exports = { LIMITERS, FOREVER_MS, MAX_FINITE_MS, windowMs, waitOf, pointsOf, keyPrefixOf, checkOptions };
