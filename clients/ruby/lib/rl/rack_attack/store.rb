# frozen_string_literal: true

module Rl
  module RackAttack
    # A store for Rack::Attack.cache.store that keeps rack-attack's own
    # throttle (a fixed window: its key names the period, its count is
    # this store's increment) and makes each count one RL.FIXED instead of
    # an INCRBY and an EXPIRE. Keys: <prefix><rack-attack's key>, so
    # rl:rack::attack:... by default, under the README's ACL recipe.
    #
    # Only increment is an rl command. read, write, delete and
    # delete_matched (Fail2Ban, Allow2Ban, reset_count, Rack::Attack.reset!)
    # are GET, SET, DEL and SCAN on the same keys: grant those too where
    # they are used. As rack-attack's Redis store, each answers nil when the
    # server cannot be reached (a count of nil: rack-attack throttles
    # nothing).
    class Store
      # The counter counts every hit, as INCRBY does: RL.FIXED at the
      # largest limit it takes never denies.
      UNCAPPED = 10**15

      attr_reader :redis, :prefix

      def initialize(redis, prefix: "rl:")
        @redis = redis
        @prefix = prefix
        @client = Rl::Client.new(redis)
      end

      # The count after adding amount, in a window of expires_in seconds
      # that starts at the key's first hit (rack-attack's key changes with
      # its period, and expires_in runs to that period's end).
      def increment(name, amount = 1, options = nil, **more)
        expires_in = (options || {}).merge(more)[:expires_in]
        raise ArgumentError, "rl: increment needs expires_in: (the window), as rack-attack passes it" unless expires_in

        window_ms = Args.seconds_to_ms(expires_in, "expires_in")
        # COST 1 is the default: left out, the server parses less.
        cost = Args.positive(amount, "amount") == 1 ? nil : amount
        failsafe { UNCAPPED - @client.fixed(key(name), limit: UNCAPPED, window_ms: window_ms, cost: cost).remaining }
      end

      def read(name, _options = nil)
        failsafe { @redis.call("get", key(name)) }
      end

      def write(name, value, options = nil, **more)
        expires_in = (options || {}).merge(more)[:expires_in]
        args = ["set", key(name), value.to_s]
        args += ["px", Args.seconds_to_ms(expires_in, "expires_in")] if expires_in
        failsafe { @redis.call(*args) }
      end

      def delete(name, _options = nil)
        failsafe { @redis.call("del", key(name)) }
      end

      # rack-attack's reset!: a glob (6.6) or a Regexp (later releases)
      # over its own keys; only keys under this store's prefix are touched.
      def delete_matched(matcher, _options = nil)
        pattern = matcher.is_a?(Regexp) ? "#{glob_escape(prefix)}*" : "#{glob_escape(prefix)}#{matcher}"
        failsafe do
          cursor = "0"
          loop do
            cursor, keys = @redis.call("scan", cursor, "match", pattern, "count", 1000)
            keys = keys.select { |k| matcher.match?(k.delete_prefix(prefix)) } if matcher.is_a?(Regexp)
            keys.each { |k| @redis.call("del", k) }
            break if cursor == "0"
          end
        end
      end

      private

      def key(name)
        "#{prefix}#{name}"
      end

      def glob_escape(text)
        text.gsub(/[\\*?\[\]]/) { |c| "\\#{c}" }
      end

      def failsafe
        yield
      rescue StandardError => e
        raise unless Errors.connection?(e)

        nil
      end
    end
  end
end
