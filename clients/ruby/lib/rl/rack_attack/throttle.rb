# frozen_string_literal: true

module Rl
  module RackAttack
    # A rack-attack throttle whose count is rl's sliding window: one command
    # per request, on <prefix><name>:<discriminator>. It is a
    # Rack::Attack::Throttle, so rack-attack treats it as its own (the
    # discriminator normalizer, throttle_data, match data, notifications,
    # the throttled responder); only the count differs.
    class Throttle < ::Rack::Attack::Throttle
      LIMITERS = %i[slide buckets throttle].freeze
      OPTIONS = %i[limit period type limiter burst precision redis prefix].freeze

      attr_reader :limiter, :burst, :precision

      # options: limit: (requests per period, or a proc of the request),
      # period: (seconds, fractions down to a ms, an ActiveSupport::Duration,
      # or a proc), limiter: :slide (the exact log, default), :buckets
      # (bounded memory; precision: bucket width in seconds) or :throttle
      # (GCRA: limit per period paced, burst: extra at once, default
      # limit - 1), redis: the connection (default Rl::RackAttack.redis),
      # prefix: (default Rl::RackAttack.prefix).
      def initialize(name, options, &block)
        raise ArgumentError, "rl: rl_throttle #{name.inspect} needs a block returning the discriminator" unless block

        unknown = options.keys - OPTIONS
        raise ArgumentError, "rl: rl_throttle #{name.inspect}: unknown option #{unknown.first.inspect}" if unknown.any?

        @limiter = options.fetch(:limiter, :slide)
        unless LIMITERS.include?(@limiter)
          raise ArgumentError, "rl: rl_throttle limiter must be one of #{LIMITERS.map(&:inspect).join(", ")}, " \
                               "not #{@limiter.inspect}"
        end
        @burst = options[:burst].nil? ? nil : Args.non_negative(options[:burst], "burst")
        @precision = options[:precision]
        @precision_ms = @precision.nil? ? nil : Args.seconds_to_ms(@precision, "precision")
        raise ArgumentError, "rl: burst: is an option of limiter: :throttle" if @burst && @limiter != :throttle
        raise ArgumentError, "rl: precision: is an option of limiter: :buckets" if @precision && @limiter != :buckets

        @redis = options[:redis]
        @prefix = options[:prefix]
        super(name, options.slice(:limit, :period, :type), &block)
        # rack-attack keeps a period as whole seconds (to_i); rl counts in
        # ms, so 0.5 stays half a second.
        @period = options[:period]
        Args.positive(@limit, "limit") unless @limit.respond_to?(:call)
        Args.seconds_to_ms(@period, "period") unless @period.respond_to?(:call)
      end

      def prefix
        @prefix || RackAttack.prefix
      end

      def matched_by?(request)
        discriminator = discriminator_for(request)
        return false unless discriminator

        current_period = period_for(request)
        current_limit = Args.positive(limit_for(request), "limit")
        epoch_time = Time.now.to_i
        begin
          decision = decide("#{prefix}#{name}:#{discriminator}", current_limit,
                            Args.seconds_to_ms(current_period, "period"))
        rescue StandardError => e
          # As rack-attack's own Redis store: a server that cannot be reached
          # throttles nothing.
          return false if Errors.connection?(e)

          raise
        end
        throttled = !decision.allowed?
        data = {
          discriminator: discriminator,
          # rack-attack's count: this request included, so a denied one is
          # above the limit (rl records nothing for it).
          count: current_limit - decision.remaining + (throttled ? 1 : 0),
          period: current_period,
          limit: current_limit,
          epoch_time: epoch_time,
          # rl's own, exact: what rack-attack's fixed window derives from
          # epoch_time and period.
          remaining: decision.remaining,
          retry_after_ms: decision.retry_after_ms,
          reset_after_ms: decision.reset_after_ms,
          limiter: limiter
        }
        annotate_request_with_throttle_data(request, data)
        if throttled
          annotate_request_with_matched_data(request, data)
          ::Rack::Attack.instrument(request)
        end
        throttled
      end

      private

      def client
        RackAttack.client_for(@redis || RackAttack.redis)
      end

      def decide(key, limit, window_ms)
        case limiter
        when :slide then client.slide(key, limit: limit, window_ms: window_ms)
        when :buckets then client.buckets(key, limit: limit, window_ms: window_ms, precision_ms: @precision_ms)
        else client.throttle(key, max_burst: burst || limit - 1, count: limit, period_ms: window_ms)
        end
      end
    end
  end
end
