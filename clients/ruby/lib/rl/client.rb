# frozen_string_literal: true

require "rl/errors"
require "rl/limiters"
require "rl/decision"
require "rl/library"

module Rl
  # rl's commands, one command per call, with typed replies, on a redis-rb
  # connection (Redis, standalone or its built-in Cluster) or anything else
  # whose call(*args) sends one command and returns its reply (a
  # RedisClient). Works on either edition: the module's RL.* commands, or
  # the function library's FCALL rl_*.
  class Client
    # The key #edition reads through rl, under rl: so that a user granted
    # only rl's commands and keys (the README's ACL recipe, +@ratelimit
    # ~rl:*) may read it. It is never written.
    PROBE_KEY = "rl:probe"

    EDITIONS = %i[module library].freeze

    # edition: :module or :library to skip finding it; load_functions: true
    # lets the client FUNCTION LOAD the library this gem ships when the
    # server has neither edition (one server: in a cluster, load it on
    # every primary yourself).
    def initialize(redis, edition: nil, load_functions: false)
      unless redis.respond_to?(:call)
        raise ArgumentError, "rl: redis must be a Redis (redis-rb) or RedisClient connection, not #{redis.class}"
      end
      unless edition.nil? || EDITIONS.include?(edition)
        raise ArgumentError, "rl: edition must be :module or :library, not #{edition.inspect}"
      end

      @redis = redis
      @edition = edition
      @load_functions = load_functions
      @lock = Mutex.new
    end

    attr_reader :redis

    # Which edition the server runs, :module or :library, found once (a
    # failure is not remembered): RL.PEEK SLIDE of PROBE_KEY, then
    # FCALL_RO rl_version 0. Calls need not ask first: the first call
    # finds the edition by its own command.
    def edition
      known = @edition
      return known if known

      run { |e| peek_line(e, PROBE_KEY, Slide.new(limit: 1, window_ms: 1000), []) }
      @edition
    rescue StandardError => e
      # An error of rl's own (PROBE_KEY holding another kind of key) still
      # showed the module.
      raise if @edition.nil? || !Errors.server?(e)

      @edition
    end

    # -- the limiters' own commands --------------------------------------

    # RL.SLIDE key limit window_ms [COST cost] [BLOCK ms] [UPTO] [WAIT ms]
    def slide(key, limit:, window_ms:, cost: nil, block_ms: nil, upto: false, wait_ms: nil)
      decide(key, Slide.new(limit: limit, window_ms: window_ms, cost: cost), block_ms, upto, wait_ms)
    end

    # RL.BUCKETS key limit window_ms [PRECISION ms] [COST cost] [BLOCK ms] [UPTO] [WAIT ms]
    def buckets(key, limit:, window_ms:, precision_ms: nil, cost: nil, block_ms: nil, upto: false, wait_ms: nil)
      limiter = Buckets.new(limit: limit, window_ms: window_ms, precision_ms: precision_ms, cost: cost)
      decide(key, limiter, block_ms, upto, wait_ms)
    end

    # RL.THROTTLE key max_burst count period_ms [quantity] [BLOCK ms] [UPTO] [WAIT ms]
    def throttle(key, max_burst:, count:, period_ms:, quantity: nil, block_ms: nil, upto: false, wait_ms: nil)
      limiter = Throttle.new(max_burst: max_burst, count: count, period_ms: period_ms, quantity: quantity)
      decide(key, limiter, block_ms, upto, wait_ms)
    end

    # RL.FIXED key limit window_ms [COST cost] [BLOCK ms] [UPTO] [WAIT ms]
    def fixed(key, limit:, window_ms:, cost: nil, block_ms: nil, upto: false, wait_ms: nil)
      decide(key, Fixed.new(limit: limit, window_ms: window_ms, cost: cost), block_ms, upto, wait_ms)
    end

    # RL.ACQUIRE key limit lease_ms [ID id] [WAIT ms]: the Decision's lease
    # is the id taken (nil when denied).
    def acquire(key, limit:, lease_ms:, id: nil, wait_ms: nil)
      decide(key, Acquire.new(limit: limit, lease_ms: lease_ms, id: id), nil, false, wait_ms)
    end

    # RL.RELEASE key lease: allowed? is whether the lease was held (and is
    # now released), remaining the leases held after it.
    def release(key, lease)
      Reply.lease_state(call("release", nil, key, [lease_id(lease)]), "RL.RELEASE")
    end

    # RL.RENEW key lease lease_ms: allowed? is whether the lease was held
    # (and now lasts lease_ms from now), remaining the leases held.
    def renew(key, lease, lease_ms:)
      args = [lease_id(lease), Args.ms(lease_ms, "lease_ms")]
      Reply.lease_state(call("renew", nil, key, args), "RL.RENEW")
    end

    # -- verbs on any limiter ----------------------------------------------

    # RL.PEEK: what the limiter's command would answer, recording nothing.
    # oldest: true adds the ms until the oldest counted unit leaves
    # (SLIDE and BUCKETS) as the Decision's oldest_ms.
    def peek(key, limiter, oldest: false)
      check_limiter(limiter)
      reply = run { |e| peek_line(e, key, limiter, oldest ? ["OLDEST"] : []) }
      Reply.decision(reply, units: limiter.units, oldest: oldest, what: "RL.PEEK")
    end

    # RL.REFUND: gives back the limiter's units (COST, or THROTTLE's
    # quantity); granted is how many were.
    def refund(key, limiter)
      check_limiter(limiter)
      Reply.settlement(call("refund", limiter.name, key, limiter.params), "RL.REFUND")
    end

    # RL.CHARGE ... COST cost: records cost units whether or not they fit
    # (the limiter's own units are not sent); granted is how many were.
    def charge(key, limiter, cost:)
      check_limiter(limiter)
      args = limiter.params(units: false) + ["COST", Args.positive(cost, "cost")]
      Reply.settlement(call("charge", limiter.name, key, args), "RL.CHARGE")
    end

    # RL.BLOCK limiter key ms: the key (read as that limiter reads it) is
    # denied for ms. Returns the block's end, ms since the epoch on the
    # server's clock. limiter: a limiter value, or its name (:slide, ...).
    def block(key, limiter, ms)
      reply = call("block", blockable(limiter), key, [Args.ms(ms, "ms")])
      return reply if reply.is_a?(Integer)

      raise Error, "rl: RL.BLOCK replied #{reply.inspect}, not an integer"
    end

    # RL.UNBLOCK limiter key: true if a block held.
    def unblock(key, limiter)
      reply = call("unblock", blockable(limiter), key, [])
      raise Error, "rl: RL.UNBLOCK replied #{reply.inspect}, not an integer" unless reply.is_a?(Integer)

      reply == 1
    end

    # RL.ALL: admitted only if every clause admits, recorded atomically.
    # clauses: [key, limiter] pairs. In a Cluster the keys must share a slot
    # (a {hash tag}).
    def all(*clauses)
      clauses = clauses.first if clauses.size == 1 && clauses.first.is_a?(Array) && clauses.first.first.is_a?(Array)
      raise ArgumentError, "rl: all needs at least one [key, limiter] clause" if clauses.empty?

      clauses.each do |clause|
        unless clause.is_a?(Array) && clause.size == 2 && clause[1].is_a?(Limiter)
          raise ArgumentError, "rl: each clause of all must be [key, limiter], not #{clause.inspect}"
        end
      end
      keys = clauses.map(&:first)
      parts = clauses.flat_map { |_, limiter| [limiter.name, *limiter.params] }
      reply = run do |e|
        e == :module ? ["rl.all", keys.size, *keys, *parts] : ["fcall", "rl_all", keys.size, *keys, *parts]
      end
      Reply.all(reply, clauses)
    end

    private

    def decide(key, limiter, block_ms, upto, wait_ms)
      options = []
      options += ["BLOCK", Args.ms(block_ms, "block_ms")] if block_ms
      options << "UPTO" if upto
      options += ["WAIT", Args.ms(wait_ms, "wait_ms")] if wait_ms
      reply = call(limiter.name.downcase, nil, key, limiter.params + options)
      Reply.decision(reply, units: limiter.units, upto: upto, what: "RL.#{limiter.name}")
    end

    def check_limiter(limiter)
      return if limiter.is_a?(Limiter)

      raise ArgumentError, "rl: limiter must be an Rl::Slide, Rl::Buckets, Rl::Throttle, Rl::Fixed or " \
                           "Rl::Acquire, not #{limiter.inspect}"
    end

    def blockable(limiter)
      name = limiter.is_a?(Limiter) ? limiter.name : limiter.to_s.upcase
      return name if BLOCKABLE.include?(name)

      raise ArgumentError, "rl: limiter must be one of #{BLOCKABLE.join(", ")} (or its Rl:: value), " \
                           "not #{limiter.inspect}"
    end

    def lease_id(lease)
      return lease if lease.is_a?(String) && !lease.empty?

      raise ArgumentError, "rl: lease must be the lease id (a non-empty String), not #{lease.inspect}"
    end

    def peek_line(edition, key, limiter, more)
      if edition == :module
        ["rl.peek", limiter.name, key, *limiter.params, *more]
      else
        ["fcall_ro", "rl_peek", 1, key, limiter.name, *limiter.params, *more]
      end
    end

    # RL.<verb> [limiter] key args on the module, FCALL rl_<verb> 1 key
    # [limiter] args on the library: the one place the editions differ.
    # Command names go lowercase: redis-rb's Cluster finds a command's key
    # by its name in COMMAND's table, which spells them so.
    def call(verb, limiter, key, args)
      run do |e|
        if e == :module
          ["rl.#{verb}", *limiter, key, *args]
        else
          ["fcall", "rl_#{verb}", 1, key, *limiter, *args]
        end
      end
    end

    # Sends the line the block makes for the server's edition. While the
    # edition is unknown it sends the module's: any reply, or an error of
    # rl's own (a bad argument, WRONGTYPE), shows the module is there;
    # "unknown command" shows it is not, and then the library is asked for
    # (FCALL_RO rl_version 0) and, if loaded, sent the library's line. A
    # known edition the server answers it no longer has (the module
    # unloaded: "unknown command"; the library flushed: "Function not
    # found") is found again, once. COMMAND, which the README's ACL recipe
    # does not grant, is never sent. NOPERM and connection errors are
    # raised as they are, the edition still unknown.
    def run(&line)
      known = @edition
      if known
        begin
          return @redis.call(*line.call(known))
        rescue StandardError => e
          raise unless gone?(e, known)

          forget(known)
          return known == :module ? library_call(&line) : run(&line)
        end
      end
      begin
        reply = @redis.call(*line.call(:module))
      rescue StandardError => e
        raise if !Errors.server?(e) || Errors.noperm?(e)
        return library_call(&line) if Errors.unknown_command?(e)

        # An error of rl's own: the module is there.
        found(:module)
        raise
      end
      found(:module)
      reply
    end

    def gone?(error, edition)
      edition == :module ? Errors.unknown_command?(error) : Errors.function_not_found?(error)
    end

    # The module is not there: the library, if loaded (or loadable), is.
    def library_call(&line)
      unless library?
        raise NotLoadedError unless @load_functions

        load_library
        raise NotLoadedError, "loaded, yet FCALL_RO rl_version 0 does not answer" unless library?
      end
      found(:library)
      @redis.call(*line.call(:library))
    end

    def library?
      @redis.call("fcall_ro", "rl_version", 0)
      true
    rescue StandardError => e
      raise unless Errors.function_not_found?(e) || Errors.unknown_command?(e)

      false
    end

    def load_library
      if @redis.respond_to?(:_client) && @redis._client.class.name == "Redis::Cluster"
        raise Error, "rl: load_functions loads the library on one server; in a cluster, load it on every " \
                     "primary (docs/functions.md#loading-the-library)"
      end
      @redis.call("function", "load", Rl.library_source)
    rescue StandardError => e
      # Another process loaded it first: that one is kept.
      raise unless Errors.server?(e) && e.message.downcase.include?("already exists")
    end

    def found(edition)
      @lock.synchronize { @edition = edition }
    end

    def forget(edition)
      @lock.synchronize { @edition = nil if @edition == edition }
    end
  end
end
