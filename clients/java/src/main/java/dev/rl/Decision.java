package dev.rl;

import java.util.List;

/**
 * rl's decision reply: {@code [allowed, remaining, retry_after_ms, reset_after_ms]},
 * and with {@code UPTO} a fifth integer, the units granted.
 *
 * <p>{@code granted} is that fifth integer when the server sent one; otherwise the
 * request's whole cost when admitted and 0 when denied, so callers read one field
 * whether or not they asked for a partial grant.
 */
public record Decision(boolean allowed, long remaining, long retryAfterMs, long resetAfterMs, long granted) {

    /**
     * {@code RL.REFUND}'s and {@code RL.CHARGE}'s reply, whose first integer counts the
     * units given back or recorded: {@code granted} is that count, {@code allowed}
     * whether it is above 0, and the rest is what {@code RL.PEEK} answers for one unit.
     */
    static Decision parseUnits(Object reply) {
        List<?> r = Replies.list(reply, 4);
        long units = Replies.integer(r, 0);
        return new Decision(units > 0, Replies.integer(r, 1), Replies.integer(r, 2), Replies.integer(r, 3), units);
    }

    static Decision parse(Object reply, long cost) {
        List<?> r = Replies.list(reply, 4);
        boolean allowed = Replies.integer(r, 0) == 1;
        long granted = r.size() >= 5 ? Replies.integer(r, 4) : (allowed ? cost : 0);
        return new Decision(allowed, Replies.integer(r, 1), Replies.integer(r, 2), Replies.integer(r, 3), granted);
    }
}
