# frozen_string_literal: true

require "rl"

module Rl
  # A store for Rails' rate_limit (7.2+: `rate_limit to:, within:, store:`),
  # which calls store.increment(key, 1, expires_in: within) and refuses
  # the request when the count is above to:. This store's count is a
  # sliding window: the hits of the last `within` (RL.BUCKETS at the
  # largest limit, so every hit is counted and none refused by rl), so at
  # most to: requests pass in any interval of that length.
  #
  # Like Rails' own stores it counts refused hits too (Rails does not tell
  # the store whether it refused): a client that keeps calling faster than
  # to: per within stays refused until it slows down, where a fixed window
  # would let it through again at the window's end.
  class RateLimitStore
    UNCAPPED = 10**15

    attr_reader :redis, :prefix

    # prefix: before Rails' key ("rate-limit:<controller>:<by>");
    # precision: the buckets' width in seconds (default: within / 60).
    def initialize(redis, prefix: "rl:", precision: nil)
      @redis = redis
      @prefix = prefix
      @precision_ms = precision.nil? ? nil : Args.seconds_to_ms(precision, "precision")
      @client = Client.new(redis)
    end

    # The hits in the last expires_in, this one included; nil when the
    # server cannot be reached (Rails then refuses nothing, as with its
    # cache stores' failsafe).
    def increment(name, amount = 1, options = nil, **more)
      expires_in = (options || {}).merge(more)[:expires_in]
      raise ArgumentError, "rl: increment needs expires_in: (rate_limit's within:)" unless expires_in

      window_ms = Args.seconds_to_ms(expires_in, "expires_in")
      cost = Args.positive(amount, "amount") == 1 ? nil : amount # COST 1 is the default
      decision = @client.buckets("#{prefix}#{name}", limit: UNCAPPED, window_ms: window_ms,
                                                      precision_ms: @precision_ms, cost: cost)
      UNCAPPED - decision.remaining
    rescue StandardError => e
      raise unless Errors.connection?(e)

      nil
    end

    def delete(name, _options = nil)
      @redis.call("del", "#{prefix}#{name}") == 1
    end
  end
end
