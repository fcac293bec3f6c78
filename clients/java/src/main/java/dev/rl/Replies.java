package dev.rl;

import java.util.List;

/** Reads the shapes rl replies with; a reply of another shape is a bug worth naming. */
final class Replies {

    private Replies() {
    }

    static List<?> list(Object reply, int atLeast) {
        if (reply instanceof List<?> list && list.size() >= atLeast) {
            return list;
        }
        throw new IllegalStateException("rl: expected an array of at least " + atLeast + " elements, got " + reply);
    }

    static long integer(List<?> reply, int index) {
        if (reply.get(index) instanceof Long value) {
            return value;
        }
        throw new IllegalStateException("rl: expected an integer at " + index + " of " + reply);
    }
}
