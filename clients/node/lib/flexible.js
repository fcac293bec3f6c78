'use strict';
// RateLimiterRl: rate-limiter-flexible's RateLimiterRedis contract on rl's
// sliding windows. It extends rate-limiter-flexible's own store base, so the
// insurance limiter, in-memory blocks, execEvenly and RateLimiterRes are
// rate-limiter-flexible's; only the store calls below are rl's.
const { requirePeer, fromClient } = require('./transport');
const { editionFor } = require('./edition');

// The store base is not among the package's exports; its file is (no
// "exports" map), and RateLimiterRedis extends the same one.
const RateLimiterStoreAbstract = requirePeer('rate-limiter-flexible/lib/RateLimiterStoreAbstract');
const { RateLimiterRes } = requirePeer('rate-limiter-flexible');

const LIMITERS = {
  // RL.SLIDE: the exact log; a member per unit, hence COST at most 100.
  slide: { name: 'SLIDE', maxPoints: 1e6, maxCost: 100 },
  // RL.BUCKETS: a bucketed window in bounded memory; any cost up to the limit.
  buckets: { name: 'BUCKETS', maxPoints: 1e15, maxCost: 1e15 },
};
const MAX_WINDOW_MS = 1e12;

function windowMs(ms) {
  // rate-limiter-flexible's duration 0 ("never expires"): rl's longest window.
  const w = ms > 0 ? Math.ceil(ms) : MAX_WINDOW_MS;
  if (w > MAX_WINDOW_MS) throw new RangeError(`rl-stores: duration must be at most ${MAX_WINDOW_MS / 1000} s`);
  return w;
}

function pointsOf(points) {
  // As RateLimiterRedis: integers only, a string of digits accepted.
  if (typeof points === 'string') {
    if (!/^[1-9][0-9]*$/.test(points)) {
      throw new Error('Consuming string different than integer values is not supported by this package');
    }
    return Number(points);
  }
  if (!Number.isInteger(points)) throw new Error('Consuming decimal number of points is not supported by this package');
  if (points < 1) throw new RangeError('rl-stores: points to consume, penalise or reward must be at least 1');
  return points;
}

// rl's four integers (a decision, or RL.PEEK's look at one unit): the units
// the window has left. A peek that would admit one unit replies what that
// unit would leave, one less.
const leftOf = (reply) => (Number(reply[2]) === 0 ? Number(reply[1]) + 1 : Number(reply[1]));
const ints = (reply) => (Array.isArray(reply) ? reply.map(ints) : Number(reply));

// Under `rl:`, so the README's ACL recipe (`~rl:*`) covers it; its own
// segment keeps it apart from rl keys an app names itself.
const DEFAULT_PREFIX = 'rl:flx';

class RateLimiterRl extends RateLimiterStoreAbstract {
  /**
   * RateLimiterRedis's options (points, duration, blockDuration, keyPrefix,
   * storeClient, insuranceLimiter, execEvenly, inMemoryBlockOnConsumed, ...),
   * plus: limiter 'slide' (default) or 'buckets', precision (ms, buckets
   * only), loadFunctions (default false).
   */
  constructor(opts = {}) {
    if (opts.blockOnConsumed) {
      throw new Error('rl-stores: blockOnConsumed is not supported: rl does not count denied requests, so the count never passes points');
    }
    super({ ...opts, keyPrefix: opts.keyPrefix === undefined ? DEFAULT_PREFIX : opts.keyPrefix });
    const limiter = LIMITERS[opts.limiter === undefined ? 'slide' : opts.limiter];
    if (!limiter) throw new Error("rl-stores: limiter must be 'slide' or 'buckets'");
    if (!Number.isInteger(this.points) || this.points < 1 || this.points > limiter.maxPoints) {
      throw new RangeError(`rl-stores: points must be an integer from 1 to ${limiter.maxPoints} for limiter '${opts.limiter || 'slide'}'`);
    }
    windowMs(this.msDuration);
    this.limiter = limiter;
    this.precision = opts.precision;
    if (this.precision !== undefined && limiter.name !== 'BUCKETS') {
      throw new Error("rl-stores: precision applies to limiter 'buckets' only");
    }
    this.loadFunctions = Boolean(opts.loadFunctions);
    this.client = opts.storeClient;
    this._transport = fromClient(this.client);
  }

  /** Resolves with 'module' or 'functions' once the server's edition is known; rejects saying how to load rl. */
  async ready() {
    return (await this._edition()).name;
  }

  _edition() {
    return editionFor(this.client, this._transport, { loadFunctions: this.loadFunctions, probeKey: this.getKey('rl-stores-probe') });
  }

  _params(window, cost) {
    const p = [this.points, window];
    if (this.precision !== undefined) p.push('PRECISION', this.precision);
    p.push('COST', cost);
    return p;
  }

  async _send(key, build, readonly = false) {
    const edition = await this._edition();
    return ints(await this._transport.send(key, build(edition), readonly));
  }

  // What the window holds, without writing: a peek at the largest cost rl
  // takes, which any unit in the window denies, so its reply is the units
  // left and the time until the window is empty (a peek that would admit
  // replies the reset its admission would give instead).
  async _peekWindow(rlKey, window) {
    const cost = Math.min(this.points, this.limiter.maxCost);
    const w = await this._send(rlKey, (e) => e.named('peek', this.limiter.name, rlKey, this._params(window, cost)), true);
    return w[0] === 1 ? { left: w[1] + cost, resetMs: w[3] } : { left: w[1], resetMs: w[3] };
  }

  // consume: the limiter's own command, one round trip. With blockDuration
  // it carries BLOCK: the server blocks the key at its first rejection, in
  // the same atomic call, and every rejection on such a key, the one that
  // starts the block included, answers with the block's time left.
  async _upsert(rlKey, points, msDuration) {
    const cost = pointsOf(points);
    const window = windowMs(msDuration);
    if (cost > this.points) {
      // Never admitted (rl refuses a cost above the limit): answered as
      // RateLimiterRedis answers it, a rejection, from a read (which sees a
      // block as a full window with the block's wait). rate-limiter-flexible
      // then starts a block, as for RateLimiterRedis, through block().
      const w = await this._peekWindow(rlKey, window);
      return { state: 'denied', left: w.left, waitMs: w.left < this.points ? w.resetMs : window };
    }
    if (cost > this.limiter.maxCost) {
      throw new RangeError(`rl-stores: limiter 'slide' takes at most ${this.limiter.maxCost} points per call (RL.SLIDE's COST); use limiter 'buckets' for larger costs`);
    }
    const params = this._params(window, cost);
    if (this.blockDuration > 0) params.push('BLOCK', windowMs(this.msBlockDuration));
    const w = await this._send(rlKey, (e) => e.command(this.limiter.name, rlKey, params));
    if (w[0] === 1) return { state: 'admitted', left: w[1], resetMs: w[3] };
    // Reported past the block threshold (points + 1 + the request's, as
    // RateLimiterRedis's counter holds once blocked), so rate-limiter-flexible
    // does not block again: the server already did.
    if (this.blockDuration > 0) return { state: 'blocked', blockMs: w[2] };
    return { state: 'denied', left: w[1], waitMs: w[2] };
  }

  // The RateLimiterRes RateLimiterRedis would answer: consumedPoints above
  // points means rejected. rl writes nothing on a denial, so the denied
  // request's points are added here, as RateLimiterRedis's counter adds them.
  _getRateLimiterRes(rlKey, changedPoints, r) {
    let consumed;
    let ms;
    if (r.state === 'blocked') {
      // RateLimiterRedis holds points + 1 while blocked, then adds the request's.
      consumed = this.points + 1 + changedPoints;
      ms = r.blockMs;
    } else if (r.state === 'denied') {
      consumed = this.points - r.left + changedPoints;
      ms = r.waitMs;
    } else {
      consumed = this.points - r.left;
      ms = r.resetMs;
    }
    const res = new RateLimiterRes();
    res.consumedPoints = consumed;
    res.isFirstInDuration = r.state === 'admitted' && consumed === changedPoints;
    res.remainingPoints = Math.max(this.points - consumed, 0);
    res.msBeforeNext = ms;
    return res;
  }

  async _get(rlKey, options = {}) {
    const window = windowMs(this._getKeySecDuration(options) * 1000);
    // A block reads as a full window whose wait is the block's time left.
    const w = await this._peekWindow(rlKey, window);
    // Nothing in the window and no block: what RateLimiterRedis calls no key.
    if (w.left >= this.points) return null;
    return { state: 'read', left: w.left, resetMs: w.resetMs };
  }

  async _delete(rlKey) {
    // The block lives in the key: deleting it lifts the block too.
    const removed = await this._send(rlKey, () => ['DEL', rlKey]);
    return removed > 0;
  }

  // penalty: records every point without a decision, past the limit if need
  // be, as RateLimiterRedis's counter does: RL.CHARGE (FCALL rl_charge), in
  // chunks of the limiter's largest call ('slide': 100). consumedPoints is
  // what the window held before (a peek: exact while within the limit, the
  // limit itself once past it) plus the points charged.
  _penalty(key, points = 1, options = {}) {
    const rlKey = this.getKey(key);
    return (async () => {
      let toCharge = pointsOf(points);
      const window = windowMs(this._getKeySecDuration(options) * 1000);
      const before = await this._peekWindow(rlKey, window);
      let charged = 0;
      let last;
      while (toCharge > 0) {
        const cost = Math.min(toCharge, this.limiter.maxCost);
        last = await this._send(rlKey, (e) => e.named('charge', this.limiter.name, rlKey, this._params(window, cost)));
        charged += last[0];
        toCharge -= cost;
        // The key's ceiling (10^15 units a bucket window counts): nothing more fits.
        if (last[0] < cost) break;
      }
      const consumed = this.points - before.left + charged;
      return new RateLimiterRes(Math.max(this.points - consumed, 0), last[3], consumed, false);
    })();
  }

  // reward: RL.REFUND gives back the newest units still in the window, never
  // below zero (RateLimiterRedis's counter may go negative).
  _reward(key, points = 1, options = {}) {
    const rlKey = this.getKey(key);
    return (async () => {
      let toRefund = pointsOf(points);
      const window = windowMs(this._getKeySecDuration(options) * 1000);
      let last;
      do {
        const cost = Math.min(toRefund, this.limiter.maxCost, this.points);
        last = await this._send(rlKey, (e) => e.named('refund', this.limiter.name, rlKey, this._params(window, cost)));
        toRefund -= last[0];
        if (last[0] < cost) break;
      } while (toRefund > 0);
      const consumed = this.points - leftOf(last);
      return new RateLimiterRes(Math.max(this.points - consumed, 0), last[3], consumed, false);
    })();
  }

  // block: RL.BLOCK on the limiter's key, ending msDuration from now
  // (replacing any earlier end); the window's counts stay.
  _block(rlKey, initPoints, msDuration, options = {}) {
    return new Promise((resolve, reject) => {
      this._writeBlock(rlKey, msDuration)
        .then(() => resolve(new RateLimiterRes(0, msDuration > 0 ? msDuration : -1, initPoints)))
        .catch((err) => this._handleError(err, 'block', resolve, reject, [this.parseKey(rlKey), msDuration / 1000, options]));
    });
  }

  async _writeBlock(rlKey, msDuration) {
    const end = await this._send(rlKey, (e) => e.named('block', this.limiter.name, rlKey, [windowMs(msDuration)]));
    if (!(end > 0)) throw new Error(`rl-stores: the block on ${rlKey} was not written (${end})`);
  }

  _set(rlKey) {
    return Promise.reject(
      new Error(`rl-stores: set() is not supported (rl records only what it admits; key ${rlKey}): use penalty(), reward() or delete()`)
    );
  }
}

module.exports = { RateLimiterRl };
