package dev.rl;

import java.util.ArrayList;
import java.util.List;

/** {@code RL.ALL}'s reply: admitted only if every clause admits; one decision per clause, in order. */
public record AllDecision(boolean allowed, long retryAfterMs, List<Decision> clauses) {

    static AllDecision parse(Object reply, List<Clause> asked) {
        List<?> r = Replies.list(reply, 2 + asked.size());
        List<Decision> clauses = new ArrayList<>(asked.size());
        for (int i = 0; i < asked.size(); i++) {
            clauses.add(Decision.parse(r.get(2 + i), asked.get(i).units()));
        }
        return new AllDecision(Replies.integer(r, 0) == 1, Replies.integer(r, 1), List.copyOf(clauses));
    }
}
