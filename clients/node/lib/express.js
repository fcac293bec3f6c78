'use strict';
// RlStore: an express-rate-limit Store with rate-limit-redis's options
// (sendCommand or sendCommandCluster, prefix), on rl's bucketed sliding window.
//
// express-rate-limit counts every request (a 429'd one too) through
// increment() and compares totalHits with its limit itself; the store never
// sees the limit. So the store is a sliding count: RL.BUCKETS with the
// largest limit rl takes admits every hit, and its `remaining` gives the
// count over the window (limit - remaining), its reset_after_ms the reset.
// RL.REFUND BUCKETS is decrement(), RL.PEEK BUCKETS is get().
const { fromSendCommand } = require('./transport');
const { editionFor, sendIn } = require('./edition');

const COUNT_ALL = 1e15;

const ints = (reply) => reply.map(Number);

class RlStore {
  /**
   * @param {object} options sendCommand(...args) or sendCommandCluster({ key, isReadOnly, command }),
   *   prefix (default 'rl:erl:'), precision (ms, default windowMs / 60), loadFunctions (default false)
   */
  constructor(options) {
    if (typeof options !== 'object' || options === null) {
      throw new TypeError('rl-stores: RlStore needs an options object');
    }
    this._transport = fromSendCommand(options);
    // Under `rl:`, so the README's ACL recipe (`~rl:*`) covers it.
    this.prefix = options.prefix === undefined ? 'rl:erl:' : options.prefix;
    this.precision = options.precision;
    this.loadFunctions = Boolean(options.loadFunctions);
    // Keys live in the server, shared by every process using it.
    this.localKeys = false;
    this.windowMs = undefined;
  }

  prefixKey(key) {
    return `${this.prefix}${key}`;
  }

  /** Called by express-rate-limit with its options; finds the edition (a failure is logged by express-rate-limit and fails each hit until rl is loaded). */
  init(options) {
    this.windowMs = options.windowMs;
    return this.ready().then(() => undefined);
  }

  /** Resolves with 'module' or 'functions'; rejects saying how to load rl. */
  async ready() {
    return (await this._edition()).name;
  }

  _edition() {
    return editionFor(this, this._transport, { loadFunctions: this.loadFunctions, probeKey: this.prefixKey('rl-stores-probe') });
  }

  _params() {
    if (!Number.isInteger(this.windowMs) || this.windowMs < 1) {
      throw new Error('rl-stores: RlStore has no window: pass it to express-rate-limit (which calls init with windowMs)');
    }
    const p = [COUNT_ALL, this.windowMs];
    if (this.precision !== undefined) p.push('PRECISION', this.precision);
    return p;
  }

  _send(key, build, readonly = false) {
    return sendIn(this, this._transport, () => this._edition(), key, build, readonly);
  }

  async increment(key) {
    const k = this.prefixKey(key);
    const params = this._params();
    const [, remaining, , resetMs] = ints(await this._send(k, (e) => e.command('BUCKETS', k, params)));
    return { totalHits: COUNT_ALL - remaining, resetTime: new Date(Date.now() + resetMs) };
  }

  async decrement(key) {
    const k = this.prefixKey(key);
    const params = this._params();
    await this._send(k, (e) => e.named('refund', 'BUCKETS', k, params));
  }

  async resetKey(key) {
    const k = this.prefixKey(key);
    await this._send(k, () => ['DEL', k]);
  }

  async get(key) {
    const k = this.prefixKey(key);
    const params = this._params();
    const [, remaining, , resetMs] = ints(await this._send(k, (e) => e.named('peek', 'BUCKETS', k, params), true));
    // A peek replies what one more hit would leave. An empty window is
    // totalHits 0, as rate-limit-redis answers for a missing key (apps read
    // getKey(key).totalHits), its reset now.
    const totalHits = COUNT_ALL - remaining - 1;
    return { totalHits, resetTime: new Date(Date.now() + (totalHits === 0 ? 0 : resetMs)) };
  }
}

module.exports = { RlStore };
