# frozen_string_literal: true

require_relative "test_helper"

# rl_throttle over HTTP: a Rack app behind rack-attack, served by WEBrick,
# on Valkey 9.1 with a stopped clock (exact waits) and Redis 7.0 on the
# real clock, each with the module and with only the function library.
class RlThrottleTest < Minitest::Test
  include RackAttackTest

  SERVERS = %i[valkey_module_stopped valkey_library_stopped redis7_module redis7_library].freeze

  def retry_after(response)
    response["retry-after"]&.to_i
  end

  SERVERS.each do |name|
    define_method("test_#{name}: a burst of the limit, then 429 with rl's Retry-After") do
      s = server(name)
      Rl::RackAttack.redis = connect(s)
      Rack::Attack.rl_throttle("api", limit: 3, period: 60) { |req| user_of(req) }
      admitted = Array.new(3) { get("alice") }
      assert_equal [200] * 3, admitted.map { |r| r.code.to_i }
      assert_equal [1, 2, 3], admitted.map { |r| throttle_data(r)["api"]["count"] }
      assert_equal [2, 1, 0], admitted.map { |r| throttle_data(r)["api"]["remaining"] }
      denied = Array.new(2) { get("alice") }
      denied.each do |r|
        assert_equal 429, r.code.to_i
        assert_equal "Retry later\n", r.body
        if s.stopped?
          assert_equal 60, retry_after(r)
        else
          assert_includes 59..60, retry_after(r)
        end
      end
      assert_equal 200, get("bob").code.to_i, "another discriminator has its own window"
      assert_equal 3, s.admin.zcard("rl:rack::attack:api:alice"), "denials write nothing"
      next unless s.stopped?

      s.advance(59.999)
      assert_equal 429, get("alice").code.to_i
      assert_equal 1, retry_after(get("alice")), "1 ms left, rounded up to a second"
      s.advance(0.001)
      assert_equal [200, 200, 200, 429], statuses("alice", 4)
    end

    define_method("test_#{name}: limiter :buckets and :throttle") do
      s = server(name)
      Rl::RackAttack.redis = connect(s)
      Rack::Attack.rl_throttle("b", limit: 2, period: 10, limiter: :buckets, precision: 1) do |req|
        req.path == "/b" && user_of(req)
      end
      Rack::Attack.rl_throttle("t", limit: 2, period: 10, limiter: :throttle) { |req| req.path == "/t" && user_of(req) }
      Rack::Attack.rl_throttle("tb", limit: 1, period: 10, limiter: :throttle, burst: 2) do |req|
        req.path == "/tb" && user_of(req)
      end
      assert_equal [200, 200, 429], statuses("carol", 3, "/b")
      assert_equal "hash", s.admin.type("rl:rack::attack:b:carol")
      assert_equal [200, 200, 429], statuses("carol", 3, "/t")
      assert_equal [200, 200, 200, 429], statuses("carol", 4, "/tb"), "a burst of 2 above the rate"
      assert_equal "string", s.admin.type("rl:rack::attack:t:carol")
      if s.stopped?
        assert_equal 5, retry_after(get("carol", "/t")), "GCRA: one request every 5 s"
        # The buckets' window frees when its oldest 1 s bucket leaves: 10,999 ms.
        assert_equal 11, retry_after(get("carol", "/b"))
        s.advance(5)
        assert_equal [200, 429], statuses("carol", 2, "/t")
      end
    end

    define_method("test_#{name}: limit and period as procs, and a period under a second") do
      s = server(name)
      Rl::RackAttack.redis = connect(s)
      limits = { "free" => 1, "paid" => 3 }
      Rack::Attack.rl_throttle("plan", limit: ->(req) { limits.fetch(user_of(req)) }, period: ->(_req) { 0.5 }) do |req|
        req.path == "/plan" && user_of(req)
      end
      assert_equal [200, 429], statuses("free", 2, "/plan")
      assert_equal [200, 200, 200, 429], statuses("paid", 4, "/plan")
      next unless s.stopped?

      assert_equal 1, retry_after(get("paid", "/plan")), "500 ms, rounded up"
      data = throttle_data(get("free", "/").tap { s.advance(0.5) })
      assert_empty data, "another path is not throttled"
      assert_equal [200, 429], statuses("free", 2, "/plan"), "half a second later"
    end
  end
end
