package dev.rl;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A limiter and its parameters without the key: what {@code RL.PEEK},
 * {@code RL.REFUND}, {@code RL.CHARGE} and each {@code RL.ALL} clause take
 * after the limiter's name.
 */
public final class Clause {

    private final Limiter limiter;
    private final List<String> params;
    private final long units;

    private Clause(Limiter limiter, long units, List<String> params) {
        this.limiter = limiter;
        this.units = units;
        this.params = Collections.unmodifiableList(params);
    }

    public static Clause slide(long limit, long windowMs, Option... options) {
        return of(Limiter.SLIDE, Option.costOf(options, 1), options, limit, windowMs);
    }

    public static Clause buckets(long limit, long windowMs, Option... options) {
        return of(Limiter.BUCKETS, Option.costOf(options, 1), options, limit, windowMs);
    }

    public static Clause fixed(long limit, long windowMs, Option... options) {
        return of(Limiter.FIXED, Option.costOf(options, 1), options, limit, windowMs);
    }

    /** {@code THROTTLE max_burst count period quantity} (a quantity of 0 only looks). */
    public static Clause throttle(long maxBurst, long count, long periodMs, long quantity, Option... options) {
        return of(Limiter.THROTTLE, quantity, options, maxBurst, count, periodMs, quantity);
    }

    /** {@code THROTTLE max_burst count period}, the form {@code RL.CHARGE} takes. */
    public static Clause throttle(long maxBurst, long count, long periodMs) {
        return of(Limiter.THROTTLE, 1, new Option[0], maxBurst, count, periodMs);
    }

    public static Clause acquire(long limit, long leaseMs, Option... options) {
        return of(Limiter.ACQUIRE, 1, options, limit, leaseMs);
    }

    private static Clause of(Limiter limiter, long units, Option[] options, long... numbers) {
        List<String> params = new ArrayList<>();
        for (long n : numbers) {
            params.add(Long.toString(n));
        }
        for (Option o : options) {
            params.addAll(o.words);
        }
        return new Clause(limiter, units, params);
    }

    public Limiter limiter() {
        return limiter;
    }

    List<String> params() {
        return params;
    }

    long units() {
        return units;
    }
}
