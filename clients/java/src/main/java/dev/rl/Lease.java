package dev.rl;

import java.util.List;

/**
 * {@code RL.ACQUIRE}'s reply: the decision and the lease id ({@code null} when
 * denied). {@code remaining} counts the slots left after this call.
 */
public record Lease(boolean allowed, long remaining, long retryAfterMs, long resetAfterMs, String id) {

    static Lease parse(Object reply) {
        List<?> r = Replies.list(reply, 5);
        Object id = r.get(4);
        return new Lease(Replies.integer(r, 0) == 1, Replies.integer(r, 1), Replies.integer(r, 2),
                Replies.integer(r, 3), id == null ? null : id.toString());
    }
}
