# frozen_string_literal: true

module Rl
  # rl's decision reply, [allowed, remaining, retry_after_ms,
  # reset_after_ms] (docs/commands.md#the-decision-reply), with:
  # - granted: UPTO's fifth integer when asked for; otherwise the request's
  #   units when admitted and 0 when denied (one field to read either way).
  #   For RL.REFUND and RL.CHARGE, the units given back or recorded.
  # - oldest_ms: RL.PEEK ... OLDEST's fifth integer (nil without it).
  # - lease: the lease id an admitted RL.ACQUIRE took (nil otherwise).
  Decision = Struct.new(:allowed, :remaining, :retry_after_ms, :reset_after_ms, :granted, :oldest_ms, :lease,
                        keyword_init: true) do
    def allowed?
      allowed
    end
  end

  # RL.ALL's reply: allowed only if every clause admitted; one Decision per
  # clause, in order.
  AllDecision = Struct.new(:allowed, :retry_after_ms, :clauses, keyword_init: true) do
    def allowed?
      allowed
    end
  end

  # Reads rl's replies; a reply of another shape is a bug worth naming.
  module Reply
    module_function

    def integers(reply, count, what)
      unless reply.is_a?(Array) && reply.size >= count && reply.first(count).all?(Integer)
        raise Error, "rl: #{what} replied #{reply.inspect}, not an array of #{count} integers"
      end

      reply
    end

    def decision(reply, units:, upto: false, oldest: false, what: "a limiter")
      r = integers(reply, upto || oldest ? 5 : 4, what)
      allowed = r[0] == 1
      lease = r[4] if r.size == 5 && !upto && !oldest
      Decision.new(allowed: allowed, remaining: r[1], retry_after_ms: r[2], reset_after_ms: r[3],
                   granted: upto ? r[4] : (allowed ? units : 0),
                   oldest_ms: oldest ? r[4] : nil, lease: lease).freeze
    end

    # RL.REFUND, RL.CHARGE: [units, remaining, retry_after_ms, reset_after_ms].
    def settlement(reply, what)
      r = integers(reply, 4, what)
      Decision.new(allowed: r[0].positive?, remaining: r[1], retry_after_ms: r[2], reset_after_ms: r[3],
                   granted: r[0]).freeze
    end

    # RL.RELEASE, RL.RENEW: [done, held, retry_after_ms, reset_after_ms].
    def lease_state(reply, what)
      r = integers(reply, 4, what)
      Decision.new(allowed: r[0] == 1, remaining: r[1], retry_after_ms: r[2], reset_after_ms: r[3],
                   granted: r[0]).freeze
    end

    def all(reply, clauses)
      r = integers(reply, 2, "RL.ALL")
      unless r.size == 2 + clauses.size
        raise Error, "rl: RL.ALL replied #{r.size} elements for #{clauses.size} clauses"
      end

      decisions = r[2..].zip(clauses).map do |one, (_, limiter)|
        decision(one, units: limiter.units, what: "an RL.ALL clause")
      end
      AllDecision.new(allowed: r[0] == 1, retry_after_ms: r[1], clauses: decisions.freeze).freeze
    end
  end
end
