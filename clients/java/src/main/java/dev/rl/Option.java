package dev.rl;

import java.util.List;

/**
 * An optional argument of a limiter's command ({@code COST}, {@code PRECISION},
 * {@code BLOCK}, {@code UPTO}, {@code ID}), given as a value so a typo cannot
 * reach the server as a stray word.
 */
public final class Option {

    final List<String> words;
    final long cost;

    private Option(long cost, String... words) {
        this.words = List.of(words);
        this.cost = cost;
    }

    /** {@code COST n}: how many units the request takes (default 1). */
    public static Option cost(long n) {
        return new Option(n, "COST", Long.toString(n));
    }

    /** {@code PRECISION ms}: {@code RL.BUCKETS}' bucket width. */
    public static Option precision(long ms) {
        return new Option(0, "PRECISION", Long.toString(ms));
    }

    /** {@code BLOCK ms}: a denial blocks the key for {@code ms}. */
    public static Option block(long ms) {
        return new Option(0, "BLOCK", Long.toString(ms));
    }

    /** {@code UPTO}: grant what fits, up to the cost ({@link Decision#granted()}). */
    public static Option upto() {
        return new Option(0, "UPTO");
    }

    /** {@code ID id}: {@code RL.ACQUIRE}'s caller-named lease. */
    public static Option id(String id) {
        return new Option(0, "ID", id);
    }

    static long costOf(Option[] options, long otherwise) {
        long cost = otherwise;
        for (Option o : options) {
            if (o.cost > 0) {
                cost = o.cost;
            }
        }
        return cost;
    }
}
