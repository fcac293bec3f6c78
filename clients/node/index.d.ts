// Types for rl-stores. The limiter's options and results are
// rate-limiter-flexible's own; the store's are express-rate-limit's.
import type { RateLimiterRes, RateLimiterStoreAbstract, RateLimiterLike } from 'rate-limiter-flexible';
import type { Store, Options as RateLimitOptions, ClientRateLimitInfo, IncrementResponse } from 'express-rate-limit';

/** A node-redis v4/v5 client or cluster, or an ioredis Redis or Cluster. */
export type RlClient = object;

/** RateLimiterRedis's options, and rl's. customIncrTtlLuaScript and useRedis3AndLowerPackage are refused. */
export interface RateLimiterRlOptions {
  storeClient: RlClient;
  /** An integer from 1 (0, negative or fractional points are refused). */
  points: number;
  /** Seconds, at most 10^8; 0 never expires (rl's longest window; waits read -1). */
  duration: number;
  /** Keys are `rl:flx:<keyPrefix>:<key>` (a keyPrefix starting with `rl:` is used as it is; default `rl:flx`). */
  keyPrefix?: string;
  /** Taken with no effect, so RateLimiterRedis's options carry over: node-redis and ioredis are told apart by their methods. */
  useRedisPackage?: boolean;
  blockDuration?: number;
  /** Block when the count, refused points included, reaches this (rate-limiter-flexible 11.4+). */
  blockOnConsumed?: number;
  /** Fail a call at once when the client is not ready, so the insuranceLimiter answers. */
  rejectIfRedisNotReady?: boolean;
  execEvenly?: boolean;
  execEvenlyMinDelayMs?: number;
  insuranceLimiter?: RateLimiterLike;
  inMemoryBlockOnConsumed?: number;
  inMemoryBlockDuration?: number;
  /** 'slide' (default): RL.SLIDE, the exact log, at most 100 points per call. 'buckets': RL.BUCKETS. */
  limiter?: 'slide' | 'buckets';
  /** Bucket width in ms (limiter 'buckets' only; rl's default is duration / 60). */
  precision?: number;
  /** Load the function library this package ships when the server has neither edition (default false). */
  loadFunctions?: boolean;
}

export declare class RateLimiterRl extends RateLimiterStoreAbstract {
  constructor(opts: RateLimiterRlOptions);
  /** 'module' or 'functions' once the server's edition is known; rejects with RlNotLoadedError saying how to load rl. */
  ready(): Promise<'module' | 'functions'>;
  consume(key: string | number, pointsToConsume?: number, options?: { [key: string]: any }): Promise<RateLimiterRes>;
  penalty(key: string | number, points?: number, options?: { [key: string]: any }): Promise<RateLimiterRes>;
  reward(key: string | number, points?: number, options?: { [key: string]: any }): Promise<RateLimiterRes>;
  get(key: string | number, options?: { [key: string]: any }): Promise<RateLimiterRes | null>;
  /** Not supported: rejects (rl records only what it admits). */
  set(key: string | number, points: number, secDuration: number, options?: { [key: string]: any }): Promise<RateLimiterRes>;
  block(key: string | number, secDuration: number, options?: { [key: string]: any }): Promise<RateLimiterRes>;
  delete(key: string | number, options?: { [key: string]: any }): Promise<boolean>;
}

export type SendCommandFn = (...args: string[]) => Promise<unknown>;
export type SendCommandClusterFn = (details: { key?: string; isReadOnly: boolean; command: string[] }) => Promise<unknown>;

export type RlStoreOptions = (
  | { sendCommand: SendCommandFn; sendCommandCluster?: never }
  | { sendCommandCluster: SendCommandClusterFn; sendCommand?: never }
) & {
  /** Prepended to every key (default 'rl:erl:'). */
  prefix?: string;
  /** Bucket width in ms (rl's default is windowMs / 60). */
  precision?: number;
  /** Load the function library this package ships when the server has neither edition (default false). */
  loadFunctions?: boolean;
};

export declare class RlStore implements Store {
  constructor(options: RlStoreOptions);
  prefix: string;
  localKeys: boolean;
  windowMs: number | undefined;
  prefixKey(key: string): string;
  /** Takes windowMs; rejects with RlNotLoadedError when the server has neither edition (express-rate-limit logs it). */
  init(options: RateLimitOptions): Promise<void>;
  ready(): Promise<'module' | 'functions'>;
  increment(key: string): Promise<IncrementResponse>;
  decrement(key: string): Promise<void>;
  resetKey(key: string): Promise<void>;
  /** totalHits 0 for an empty window, as rate-limit-redis answers for a missing key. */
  get(key: string): Promise<ClientRateLimitInfo>;
}

export { RlStore as RedisStore, RateLimiterRl as RateLimiterRedis };

export declare class RlNotLoadedError extends Error {}

/** The path of the function library (rl.lua) this package ships. */
export declare function libraryPath(): string;
