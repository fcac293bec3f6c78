package dev.rl;

/** rl's limiters, as {@code RL.PEEK}, {@code RL.REFUND}, {@code RL.CHARGE}, {@code RL.BLOCK} and {@code RL.ALL} name them. */
public enum Limiter {
    SLIDE, BUCKETS, THROTTLE, FIXED, ACQUIRE
}
