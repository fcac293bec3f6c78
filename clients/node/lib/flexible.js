'use strict';
// RateLimiterRl: rate-limiter-flexible's RateLimiterRedis contract on rl's
// sliding windows. It extends rate-limiter-flexible's own store base, so the
// insurance limiter, in-memory blocks, execEvenly, blockOnConsumed and
// RateLimiterRes are rate-limiter-flexible's; only the store calls below are
// rl's.
//
// What a key has consumed is what RateLimiterRedis's counter would hold: the
// units rl's window counts (at most points) plus the tally, the points of the
// requests refused since the window filled. rl records nothing for a denial,
// so the adapter counts them in an RL.FIXED counter beside the window (the
// tally: `<keyPrefix>!over:<key>`) that ends when the window has room again
// or the block ends. So `get()` after a breach says consumedPoints > points,
// as the login recipe of rate-limiter-flexible's wiki needs.
const { requirePeer, fromClient } = require('./transport');
const { editionFor, sendIn } = require('./edition');
const { isClientReady } = require('./ready');
const { FOREVER_MS, windowMs, waitOf, pointsOf, keyPrefixOf, checkOptions } = require('./flexible-options');

// The store base is not among the package's exports; its file is (no
// "exports" map), and RateLimiterRedis extends the same one.
const RateLimiterStoreAbstract = requirePeer('rate-limiter-flexible/lib/RateLimiterStoreAbstract');
const { RateLimiterRes } = requirePeer('rate-limiter-flexible');

// The tally's RL.FIXED limit: the largest rl takes, never reached, so every
// charge is recorded and its reply's `remaining` gives the count.
const TALLY_LIMIT = 1e15;
const tallyCount = (reply) => TALLY_LIMIT - 1 - reply[1];
// A wait from a reply as a window for the tally: 1 ms to rl's longest.
const tallyWindow = (ms) => Math.min(Math.max(1, Math.ceil(ms)), FOREVER_MS);

// rl's four integers (a decision, or RL.PEEK's look at one unit): the units
// the window has left. A peek that would admit one unit replies what that
// unit would leave, one less.
const leftOf = (reply) => (Number(reply[2]) === 0 ? Number(reply[1]) + 1 : Number(reply[1]));
const ints = (reply) => (Array.isArray(reply) ? reply.map(ints) : Number(reply));

class RateLimiterRl extends RateLimiterStoreAbstract {
  /**
   * RateLimiterRedis's options (points, duration, blockDuration, keyPrefix,
   * storeClient, insuranceLimiter, execEvenly, inMemoryBlockOnConsumed,
   * blockOnConsumed, rejectIfRedisNotReady, ...), plus: limiter 'slide'
   * (default) or 'buckets', precision (ms, buckets only), loadFunctions
   * (default false).
   */
  constructor(opts = {}) {
    super({ ...opts, keyPrefix: keyPrefixOf(opts.keyPrefix) });
    this.limiter = checkOptions(opts);
    if (opts.blockOnConsumed > 0 && typeof this._crossedBlockThreshold !== 'function') {
      throw new Error('rl-stores: blockOnConsumed needs rate-limiter-flexible 11.4 or newer (older releases ignore it)');
    }
    this.precision = opts.precision;
    this.loadFunctions = Boolean(opts.loadFunctions);
    this.rejectIfRedisNotReady = Boolean(opts.rejectIfRedisNotReady);
    this.client = opts.storeClient;
    this._transport = fromClient(this.client);
    // The server blocks the key at its first denial, in the same atomic
    // call, unless blockOnConsumed puts the block later: then
    // rate-limiter-flexible blocks through block() when the count reaches it.
    this._serverBlocks = this.blockDuration > 0 && !(this.blockOnConsumed > this.points);
    this._blockedByServer = null;
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
    // RateLimiterRedis's rejectIfRedisNotReady: fail now, so the insurance
    // limiter answers, rather than wait while the client reconnects.
    if (this.rejectIfRedisNotReady && !isClientReady(this.client, key)) throw new Error('Redis connection is not ready');
    return ints(await sendIn(this.client, this._transport, () => this._edition(), key, build, readonly));
  }

  _tallyKey(rlKey) {
    return `${this.keyPrefix}!over:${this.parseKey(rlKey)}`;
  }

  // The tally's count and the ms until it ends (a read: RL.PEEK FIXED).
  async _readTally(rlKey) {
    const k = this._tallyKey(rlKey);
    const w = await this._send(k, (e) => e.named('peek', 'FIXED', k, [TALLY_LIMIT, 1]), true);
    return { count: tallyCount(w), ms: w[3] };
  }

  // Adds n to the tally (RL.CHARGE FIXED); a new tally ends in `ms`, a
  // running one keeps its end. Returns the count after.
  async _addTally(rlKey, n, ms) {
    const k = this._tallyKey(rlKey);
    const w = await this._send(k, (e) => e.named('charge', 'FIXED', k, [TALLY_LIMIT, tallyWindow(ms), 'COST', n]));
    return tallyCount(w);
  }

  // What the window holds, without writing: a peek at the largest cost rl
  // takes, which any unit in the window denies, so its reply is the units
  // left and the time until the window is empty (a peek that would admit
  // replies the reset its admission would give instead). A block reads as a
  // full window whose wait is the block's time left.
  async _peekWindow(rlKey, window) {
    const cost = Math.min(this.points, this.limiter.maxCost);
    const w = await this._send(rlKey, (e) => e.named('peek', this.limiter.name, rlKey, this._params(window, cost)), true);
    return w[0] === 1 ? { left: w[1] + cost, resetMs: w[3] } : { left: w[1], resetMs: w[3] };
  }

  // RateLimiterRedis's counter, read: the window's units plus the tally;
  // the wait is the tally's end while it runs (the block's, or until the
  // window has room), else the window's.
  async _state(rlKey, window) {
    const [w, t] = await Promise.all([this._peekWindow(rlKey, window), this._readTally(rlKey)]);
    return {
      consumed: this.points - w.left + t.count,
      ms: t.count > 0 ? t.ms : w.resetMs,
      empty: w.left >= this.points && t.count === 0,
    };
  }

  // consume: the limiter's own command, one round trip when admitted. With
  // blockDuration it carries BLOCK: the server blocks the key at its first
  // rejection, in the same atomic call. A denial adds its points to the
  // tally: one more round trip (RL.CHARGE FIXED) per denied call.
  async _upsert(rlKey, points, msDuration) {
    const n = pointsOf(points);
    const window = windowMs(msDuration);
    // RateLimiterRedis's INCRBY of 0 reads; of a negative number gives back.
    if (n === 0) return this._state(rlKey, window);
    if (n < 0) return this._giveBack(rlKey, -n, window);
    if (n > this.points) return this._aboveLimit(rlKey, n, window);
    if (n > this.limiter.maxCost) {
      throw new RangeError(`rl-stores: limiter 'slide' takes at most ${this.limiter.maxCost} points per call (RL.SLIDE's COST); use limiter 'buckets' for larger costs`);
    }
    const params = this._params(window, n);
    const blockMs = this._serverBlocks ? windowMs(this.msBlockDuration, 'blockDuration') : 0;
    if (blockMs) params.push('BLOCK', blockMs);
    const w = await this._send(rlKey, (e) => e.command(this.limiter.name, rlKey, params));
    if (w[0] === 1) return { admitted: true, consumed: this.points - w[1], ms: w[3] };
    const count = await this._addTally(rlKey, n, w[2]);
    // The call that started the block answers [0, 0, ms, ms]: the server
    // already wrote what block() would (see _block).
    const started = blockMs > 0 && w[1] === 0 && w[2] === blockMs && w[3] === blockMs;
    return { admitted: false, consumed: this.points - w[1] + count, ms: w[2], blockedByServer: started };
  }

  // A cost above points: never admitted (rl refuses a cost above the
  // limit), counted in the tally as RateLimiterRedis's counter counts it,
  // until the window is empty (or for a window from now if it is).
  // rate-limiter-flexible then starts a block, if any, through block().
  async _aboveLimit(rlKey, n, window) {
    const w = await this._peekWindow(rlKey, window);
    const wait = w.left < this.points ? w.resetMs : window;
    const count = await this._addTally(rlKey, n, wait);
    return { admitted: false, consumed: this.points - w.left + count, ms: wait };
  }

  // reward (and a consume of negative points): the tally's points first, as
  // they are the newest of RateLimiterRedis's count, then RL.REFUND of the
  // newest units still in the window, never below zero (RateLimiterRedis's
  // counter may go negative).
  async _giveBack(rlKey, points, window) {
    let toRefund = points;
    let { count } = await this._readTally(rlKey);
    if (count > 0) {
      const k = this._tallyKey(rlKey);
      const take = Math.min(toRefund, count);
      const w = await this._send(k, (e) => e.named('refund', 'FIXED', k, [TALLY_LIMIT, 1, 'COST', take]));
      count -= w[0];
      toRefund -= w[0];
    }
    let last;
    while (toRefund > 0) {
      const cost = Math.min(toRefund, this.limiter.maxCost, this.points);
      last = await this._send(rlKey, (e) => e.named('refund', this.limiter.name, rlKey, this._params(window, cost)));
      toRefund -= last[0];
      if (last[0] < cost) break;
    }
    if (!last) {
      const s = await this._state(rlKey, window);
      return { admitted: true, consumed: s.consumed, ms: s.ms };
    }
    return { admitted: true, consumed: this.points - leftOf(last) + count, ms: last[3] };
  }

  // The RateLimiterRes RateLimiterRedis would answer: consumedPoints above
  // points means rejected (or blocked).
  _getRateLimiterRes(rlKey, changedPoints, r) {
    const res = new RateLimiterRes();
    res.consumedPoints = r.consumed;
    res.isFirstInDuration = Boolean(r.admitted) && r.consumed === changedPoints;
    res.remainingPoints = Math.max(this.points - r.consumed, 0);
    res.msBeforeNext = waitOf(r.ms);
    // rate-limiter-flexible calls _block for this key right after this, in
    // the same tick, when the denial crossed the block threshold.
    this._blockedByServer = r.blockedByServer ? rlKey : null;
    if (r.blockedByServer) {
      process.nextTick(() => {
        if (this._blockedByServer === rlKey) this._blockedByServer = null;
      });
    }
    return res;
  }

  async _get(rlKey, options = {}) {
    const s = await this._state(rlKey, windowMs(this._getKeySecDuration(options) * 1000));
    // Nothing in the window, no tally and no block: what RateLimiterRedis calls no key.
    return s.empty ? null : s;
  }

  async _delete(rlKey) {
    // The block lives in the key: deleting it lifts the block too.
    const tally = this._tallyKey(rlKey);
    const [removed] = await Promise.all([this._send(rlKey, () => ['DEL', rlKey]), this._send(tally, () => ['DEL', tally])]);
    return removed > 0;
  }

  // penalty: records every point without a decision, past the limit if need
  // be, as RateLimiterRedis's counter does: RL.CHARGE (FCALL rl_charge), in
  // chunks of the limiter's largest call ('slide': 100). The points that
  // went past the limit also go to the tally, so a read says how far past.
  _penalty(key, points = 1, options = {}) {
    const rlKey = this.getKey(key);
    return (async () => {
      const n = pointsOf(points);
      const window = windowMs(this._getKeySecDuration(options) * 1000);
      if (n <= 0) {
        const r = n === 0 ? await this._state(rlKey, window) : await this._giveBack(rlKey, -n, window);
        return this._getRateLimiterRes(rlKey, n, r);
      }
      const [before, tally] = await Promise.all([this._peekWindow(rlKey, window), this._readTally(rlKey)]);
      let toCharge = n;
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
      const past = charged - before.left;
      if (past > 0) await this._addTally(rlKey, past, last[2] || last[3]);
      // Past the limit, the wait is until one unit fits again (the charge's
      // retry_after_ms), as a denial's.
      return this._getRateLimiterRes(rlKey, n, { consumed: this.points - before.left + tally.count + charged, ms: last[2] > 0 ? last[2] : last[3] });
    })();
  }

  _reward(key, points = 1, options = {}) {
    const rlKey = this.getKey(key);
    return (async () => {
      const n = pointsOf(points);
      if (n < 0) return this._penalty(key, -n, options);
      const window = windowMs(this._getKeySecDuration(options) * 1000);
      const r = n === 0 ? await this._state(rlKey, window) : await this._giveBack(rlKey, n, window);
      return this._getRateLimiterRes(rlKey, -n, r);
    })();
  }

  // block: RL.BLOCK on the limiter's key, ending msDuration from now (0:
  // never, rl's longest block), replacing any earlier end; the window's
  // counts stay. The tally becomes what RateLimiterRedis's counter holds
  // while blocked (points + 1 by hand, or the count that crossed), until
  // the block ends. Skipped when the server has just blocked the key in
  // the consume that crossed (it wrote the same).
  _block(rlKey, initPoints, msDuration, options = {}) {
    const done = this._blockedByServer === rlKey;
    this._blockedByServer = null;
    return new Promise((resolve, reject) => {
      (done ? Promise.resolve() : this._writeBlock(rlKey, initPoints, msDuration))
        .then(() => resolve(new RateLimiterRes(0, msDuration > 0 ? msDuration : -1, initPoints)))
        .catch((err) => this._handleError(err, 'block', resolve, reject, [this.parseKey(rlKey), msDuration / 1000, options]));
    });
  }

  async _writeBlock(rlKey, initPoints, msDuration) {
    const ms = windowMs(msDuration, 'the block');
    const end = await this._send(rlKey, (e) => e.named('block', this.limiter.name, rlKey, [ms]));
    if (!(end > 0)) throw new Error(`rl-stores: the block on ${rlKey} was not written (${end})`);
    const tally = this._tallyKey(rlKey);
    await this._send(tally, () => ['DEL', tally]);
    if (initPoints > this.points) await this._addTally(rlKey, initPoints - this.points, ms);
  }

  _set(rlKey) {
    return Promise.reject(
      new Error(`rl-stores: set() is not supported (rl records only what it admits; key ${rlKey}): use penalty(), reward() or delete()`)
    );
  }
}

module.exports = { RateLimiterRl };
