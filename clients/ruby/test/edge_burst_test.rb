# frozen_string_literal: true

require_relative "test_helper"

# Across a window's edge, in the same run, on real clocks: a client sends
# the limit just before one of rack-attack's period boundaries and the
# limit again just after, all within one period. rack-attack's own
# throttle (its Redis store: INCRBY + EXPIRE on a key per period) lets
# both bursts through, twice the limit; rl_throttle lets through the limit,
# and no more, in any period.
class EdgeBurstTest < Minitest::Test
  include RackAttackTest

  LIMIT = 5
  PERIOD = 2 # seconds: rack-attack's windows turn at each even second

  def burst(path, user)
    Array.new(LIMIT) do
      r = get(user, path)
      [r.code.to_i, Time.now.to_f]
    end
  end

  # Sleeps until `ahead` seconds before the next period boundary.
  def wait_for_edge(ahead)
    now = Time.now.to_f
    edge = (now / PERIOD).floor * PERIOD + PERIOD
    edge += PERIOD if edge - now < ahead + 0.05
    sleep(edge - ahead - Time.now.to_f)
    edge
  end

  %i[redis7_module valkey_library].each do |name|
    define_method("test_#{name}: rack-attack's throttle lets twice the limit through across an edge, rl_throttle the limit") do
      s = server(name)
      Rack::Attack.cache.store = connect(s)
      Rl::RackAttack.redis = connect(s)
      Rack::Attack.throttle("fixed", limit: LIMIT, period: PERIOD) { |req| req.path == "/fixed" && user_of(req) }
      Rack::Attack.rl_throttle("sliding", limit: LIMIT, period: PERIOD) { |req| req.path == "/sliding" && user_of(req) }
      # The first burst must end before the edge; a slow machine gets a
      # second try with more time.
      [0.6, 1.2].each_with_index do |ahead, attempt|
        user = "edge#{attempt}"
        edge = wait_for_edge(ahead)
        before = burst("/fixed", user) + burst("/sliding", user)
        if before.map(&:last).max >= edge
          next if attempt.zero?

          flunk "the first bursts took #{(before.map(&:last).max - edge + ahead).round(2)} s, past the edge"
        end
        sleep(edge + 0.05 - Time.now.to_f)
        fixed_after = burst("/fixed", user)
        sliding_after = burst("/sliding", user)
        elapsed = (fixed_after + sliding_after).map(&:last).max - (edge - ahead)
        assert_operator elapsed, :<, PERIOD, "all four bursts within one period"
        fixed = before.first(LIMIT) + fixed_after
        sliding = before.last(LIMIT) + sliding_after
        admitted = ->(list) { list.count { |code, _| code == 200 } }
        assert_equal 2 * LIMIT, admitted.call(fixed), "rack-attack's fixed window: both bursts through"
        assert_equal LIMIT, admitted.call(sliding), "rl's sliding window: the limit, in one period"
        assert_equal [429] * LIMIT, sliding_after.map(&:first)
        break
      end
    end
  end
end
