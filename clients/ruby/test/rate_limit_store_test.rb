# frozen_string_literal: true

require_relative "test_helper"
require "rl/rate_limit_store"
require "active_support/core_ext/integer/time"

# Rl::RateLimitStore against Rails' rate_limit contract as actionpack 7.2
# to 8.1 call it (Debian 12 has actionpack 6.1, which has no rate_limit, so
# Rails itself is not run here): a before-action computes
#   count = store.increment("rate-limit:<controller>:<by>", 1, expires_in: within)
# and refuses the request when count && count > to. Here that call, made
# as written, in a Rack app over HTTP, on both editions (Valkey 9.1, a
# stopped clock).
class RateLimitStoreTest < Minitest::Test
  include RlTest

  TO = 3
  WITHIN = 1.minute

  # The few lines of Rails' filter this store meets, for a SessionsController.
  def rails_like_app(store)
    lambda do |env|
      by = env["HTTP_X_USER"]
      cache_key = ["rate-limit", "sessions", nil, by].compact.join(":")
      count = store.increment(cache_key, 1, expires_in: WITHIN)
      if count && count > TO
        [429, {}, ["Too Many Requests\n"]]
      else
        [200, {}, [count.to_s]]
      end
    end
  end

  %i[valkey_module_stopped valkey_library_stopped].each do |name|
    define_method("test_#{name}: rate_limit's increment limits in a sliding window") do
      s = server(name)
      http = HttpApp.new(rails_like_app(Rl::RateLimitStore.new(s.redis)))
      codes = ->(n) { Array.new(n) { http.get("/", "X-User" => "10.0.0.1").code.to_i } }
      assert_equal [200, 200, 200, 429], codes.call(4)
      assert_equal "hash", s.admin.type("rl:rate-limit:sessions:10.0.0.1")
      assert_equal [200], Array.new(1) { http.get("/", "X-User" => "10.0.0.2").code.to_i }
      # 30 s on, the first hits still count: refused (and counted, as Rails'
      # stores count every hit).
      s.advance(30)
      assert_equal [429], codes.call(1)
      # The first four leave the window at 60 s (and the one bucket of a
      # second that holds them): one hit of the last minute left.
      s.advance(31)
      assert_equal [200, 200, 429], codes.call(3)
    ensure
      http&.stop
    end
  end

  def test_the_contracts_calls
    s = server(:valkey_module_stopped)
    store = Rl::RateLimitStore.new(s.redis, prefix: "rl:rails:", precision: 0.5)
    assert_equal [1, 3], [store.increment("k", 1, expires_in: 10.seconds), store.increment("k", 2, expires_in: 10.seconds)]
    assert_equal 1, store.increment("j", 1, { expires_in: 10 }), "an options hash, as ActiveSupport 6 passes it"
    assert store.delete("k")
    assert_equal 1, store.increment("k", 1, expires_in: 10)
    assert_raises(ArgumentError) { store.increment("k") }
    down = Rl::RateLimitStore.new(Redis.new(port: Servers.free_port, reconnect_attempts: 0))
    assert_nil down.increment("k", 1, expires_in: 10), "unreachable: nil, which Rails lets through"
  end
end
