# frozen_string_literal: true

require "rl/args"

module Rl
  # One of rl's limiters with its parameters: what RL.PEEK, RL.REFUND,
  # RL.CHARGE and RL.ALL take after the limiter's name, and what
  # RL.BLOCK / RL.UNBLOCK read the key as. Values: checked when made,
  # frozen.
  class Limiter
    # The limiter's name in those commands: SLIDE, BUCKETS, ...
    def name
      self.class::NAME
    end

    # The request's units (COST, or THROTTLE's quantity).
    def units
      1
    end

    # The parameters after the key; units: false leaves the request's units
    # out (RL.CHARGE names its own).
    def params(units: true)
      raise NotImplementedError
    end

    def ==(other)
      other.class == self.class && other.params == params
    end
    alias eql? ==

    def hash
      [self.class, params].hash
    end

    def inspect
      "#<#{self.class.name} #{params.join(" ")}>"
    end

    private

    def with_cost(list, units, cost)
      units && cost ? list + ["COST", cost] : list
    end
  end

  # A limit of units per window with an optional COST: RL.SLIDE's and
  # RL.FIXED's parameters, which differ only in how the window is counted.
  class Windowed < Limiter
    attr_reader :limit, :window_ms, :cost

    def initialize(limit:, window_ms:, cost: nil)
      super()
      @limit = Args.positive(limit, "limit")
      @window_ms = Args.ms(window_ms, "window_ms")
      @cost = cost.nil? ? nil : Args.positive(cost, "cost")
      freeze
    end

    def units
      cost || 1
    end

    def params(units: true)
      with_cost([limit, window_ms], units, cost)
    end
  end

  # RL.SLIDE's exact sliding-window log: at most limit units in any window.
  class Slide < Windowed
    NAME = "SLIDE"
  end

  # RL.BUCKETS's sliding window of counters; precision_ms nil lets the
  # server choose (window / 60).
  class Buckets < Limiter
    NAME = "BUCKETS"
    attr_reader :limit, :window_ms, :precision_ms, :cost

    def initialize(limit:, window_ms:, precision_ms: nil, cost: nil)
      super()
      @limit = Args.positive(limit, "limit")
      @window_ms = Args.ms(window_ms, "window_ms")
      @precision_ms = precision_ms.nil? ? nil : Args.ms(precision_ms, "precision_ms")
      @cost = cost.nil? ? nil : Args.positive(cost, "cost")
      freeze
    end

    def units
      cost || 1
    end

    def params(units: true)
      list = [limit, window_ms]
      list += ["PRECISION", precision_ms] if precision_ms
      with_cost(list, units, cost)
    end
  end

  # RL.THROTTLE's GCRA: count per period_ms, bursts of max_burst + 1.
  # quantity nil sends none (one unit); 0 only looks.
  class Throttle < Limiter
    NAME = "THROTTLE"
    attr_reader :max_burst, :count, :period_ms, :quantity

    def initialize(max_burst:, count:, period_ms:, quantity: nil)
      super()
      @max_burst = Args.non_negative(max_burst, "max_burst")
      @count = Args.positive(count, "count")
      @period_ms = Args.ms(period_ms, "period_ms")
      @quantity = quantity.nil? ? nil : Args.non_negative(quantity, "quantity")
      freeze
    end

    def units
      quantity || 1
    end

    def params(units: true)
      list = [max_burst, count, period_ms]
      units && quantity ? list + [quantity] : list
    end
  end

  # RL.FIXED's fixed window: one counter per window.
  class Fixed < Windowed
    NAME = "FIXED"
  end

  # RL.ACQUIRE's concurrency limit: at most limit leases of lease_ms each;
  # id, if given, names the lease.
  class Acquire < Limiter
    NAME = "ACQUIRE"
    attr_reader :limit, :lease_ms, :id

    def initialize(limit:, lease_ms:, id: nil)
      super()
      @limit = Args.positive(limit, "limit")
      @lease_ms = Args.ms(lease_ms, "lease_ms")
      unless id.nil? || (id.is_a?(String) && !id.empty?)
        raise ArgumentError, "rl: id must be a non-empty String, not #{id.inspect}"
      end

      @id = id
      freeze
    end

    def params(units: true)
      id ? [limit, lease_ms, "ID", id] : [limit, lease_ms]
    end
  end

  # The limiters RL.BLOCK and RL.UNBLOCK take by name.
  BLOCKABLE = %w[SLIDE BUCKETS THROTTLE FIXED].freeze
end
