# frozen_string_literal: true

require "rack/attack"
require "rl"

module Rl
  # rl under rack-attack, two ways:
  # - Rack::Attack.rl_throttle: a sliding-window throttle, one RL.SLIDE (or
  #   RL.BUCKETS, RL.THROTTLE) per request, filling rack-attack's
  #   throttle_data, responder and notifications as its own throttle does;
  # - Rl::RackAttack::Store, for Rack::Attack.cache.store: rack-attack's
  #   own fixed-window throttle, its count one RL.FIXED per request.
  module RackAttack
    # rl_throttle's keys: <prefix><throttle name>:<discriminator>, under rl:
    # for the README's ACL recipe; rack-attack's own prefix follows.
    DEFAULT_PREFIX = "rl:rack::attack:"

    class << self
      # The connection rl_throttle sends on (a Redis, or a RedisClient);
      # unset, the one behind Rack::Attack.cache.store when that is a Redis,
      # an ActiveSupport RedisCacheStore or an Rl::RackAttack::Store.
      attr_writer :redis

      # rl_throttle's key prefix; DEFAULT_PREFIX unless set.
      attr_writer :prefix

      def prefix
        @prefix || DEFAULT_PREFIX
      end

      def redis
        @redis || redis_behind(::Rack::Attack.cache.store) ||
          raise(Rl::Error, "rl: rl_throttle has no Redis to call: set Rl::RackAttack.redis = Redis.new(...), " \
                           "or give rl_throttle redis:, or make Rack::Attack.cache.store a Redis")
      end

      # One Rl::Client per connection, so the edition is found once for all
      # the throttles sharing it.
      def client_for(redis)
        @clients_lock.synchronize do
          found = @clients.find { |r, _| r.equal?(redis) }
          return found[1] if found

          client = Rl::Client.new(redis)
          @clients = [[redis, client], *@clients.first(7)]
          client
        end
      end

      private

      def redis_behind(store)
        store = store.__getobj__ if store.respond_to?(:__getobj__) # rack-attack's proxies
        return store if defined?(::Redis) && store.is_a?(::Redis)
        return store.redis if store.is_a?(Store)

        store.redis if store.class.name == "ActiveSupport::Cache::RedisCacheStore"
      end
    end
    @clients = []
    @clients_lock = Mutex.new

    # Rack::Attack.rl_throttle(name, limit:, period:, ...) { |req| discriminator }
    module ClassMethods
      def rl_throttle(name, options, &block)
        configuration.rl_throttle(name, options, &block)
      end
    end

    # Registered where rack-attack registers its own throttles (same table,
    # same order, same name space).
    module ConfigurationMethods
      def rl_throttle(name, options, &block)
        throttles[name] = Rl::RackAttack::Throttle.new(name, options, &block)
      end
    end

    # The 429 of an rl_throttle carries Retry-After from rl's exact wait:
    # added when the responder set none, and put in place of the one
    # rack-attack's default responder computes (which assumes a fixed
    # window: the seconds to the end of the current period).
    module RetryAfter
      def call(env)
        response = super
        matched = env["rack.attack.matched"]
        data = env["rack.attack.match_data"]
        return response unless env["rack.attack.match_type"] == :throttle && data.is_a?(Hash) &&
                               ::Rack::Attack.throttles[matched].is_a?(Rl::RackAttack::Throttle) &&
                               data[:retry_after_ms]

        status, headers, body = response
        seconds = ((data[:retry_after_ms] + 999) / 1000).to_s
        name = headers.keys.find { |k| k.to_s.casecmp?("retry-after") }
        return response if name && !default_responder?

        headers = headers.dup if headers.frozen?
        headers[name || "retry-after"] = seconds
        [status, headers, body]
      end

      private

      def default_responder?
        config = ::Rack::Attack.configuration
        return false if config.respond_to?(:throttled_response) && config.throttled_response

        defined?(::Rack::Attack::Configuration::DEFAULT_THROTTLED_RESPONDER) &&
          config.throttled_responder.equal?(::Rack::Attack::Configuration::DEFAULT_THROTTLED_RESPONDER)
      end
    end
  end
end

require "rl/rack_attack/throttle"
require "rl/rack_attack/store"

Rack::Attack.singleton_class.prepend(Rl::RackAttack::ClassMethods)
Rack::Attack::Configuration.prepend(Rl::RackAttack::ConfigurationMethods)
Rack::Attack.prepend(Rl::RackAttack::RetryAfter)
