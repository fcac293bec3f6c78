# frozen_string_literal: true

require_relative "test_helper"
require "active_support/cache"
require "active_support/cache/redis_cache_store"

# What rl_throttle keeps of rack-attack, shown through rack-attack itself
# over HTTP (Valkey 9.1, the module, a stopped clock): the throttle data,
# the match data its responders read, its notifications, safelists and
# blocklists before throttles, the discriminator normalizer, its own
# throttles beside rl's, failing open when the server is unreachable.
class RackAttackBehaviourTest < Minitest::Test
  include RackAttackTest

  def setup
    super
    @server = server(:valkey_module_stopped)
    Rl::RackAttack.redis = connect(@server)
  end

  def limit_alice(limit = 2, period = 60, &block)
    Rack::Attack.rl_throttle("api", limit: limit, period: period, &(block || ->(req) { user_of(req) }))
  end

  def test_throttle_data_as_rack_attack_fills_it_plus_rls_exact_waits
    limit_alice
    before = Time.now.to_i
    data = throttle_data(get("alice"))["api"]
    assert_operator data.delete("epoch_time"), :>=, before
    assert_equal({ "discriminator" => "alice", "count" => 1, "period" => 60, "limit" => 2, "remaining" => 1,
                   "retry_after_ms" => 0, "reset_after_ms" => 60_000, "limiter" => "slide" }, data)
  end

  def test_a_custom_responder_gets_the_match_data_and_retry_after_is_added
    seen = []
    Rack::Attack.throttled_responder = lambda do |req|
      data = req.env["rack.attack.match_data"]
      seen << [req.env["rack.attack.matched"], req.env["rack.attack.match_type"], req.env["rack.attack.match_discriminator"],
               data[:count], data[:limit], data[:retry_after_ms]]
      [503, { "content-type" => "text/plain", "ratelimit-remaining" => data[:remaining].to_s }, ["busy\n"]]
    end
    limit_alice
    @server.advance(0.25)
    assert_equal [200, 200], statuses("alice", 2)
    @server.advance(10)
    r = get("alice")
    assert_equal ["503", "busy\n", "0", "50"], [r.code, r.body, r["ratelimit-remaining"], r["retry-after"]]
    assert_equal [["api", :throttle, "alice", 3, 2, 50_000]], seen
  end

  def test_a_retry_after_the_responder_sets_is_kept
    Rack::Attack.throttled_responder = ->(_req) { [429, { "Retry-After" => "7" }, ["later\n"]] }
    limit_alice(1)
    get("alice")
    r = get("alice")
    assert_equal ["429", "7"], [r.code, r["retry-after"]]
  end

  def test_the_default_responders_fixed_window_retry_after_is_replaced_by_rls
    # rack-attack's default computes period - now % period: the end of a
    # fixed window, which a sliding window does not have.
    Rack::Attack.throttled_response_retry_after_header = true
    limit_alice(1, 3600)
    get("alice")
    @server.advance(600)
    r = get("alice")
    assert_equal ["429", "3000"], [r.code, r["retry-after"]]
  end

  def test_one_notification_per_throttled_request
    events = []
    subscriber = ActiveSupport::Notifications.subscribe(/rack[._]attack/) do |name, _start, _finish, _id, payload|
      env = payload[:request].env
      events << [name, env["rack.attack.matched"], env["rack.attack.match_data"][:count]]
    end
    limit_alice
    assert_equal [200, 200, 429, 429], statuses("alice", 4)
    assert_equal [["throttle.rack_attack", "api", 3], ["rack.attack", "api", 3],
                  ["throttle.rack_attack", "api", 3], ["rack.attack", "api", 3]], events
  ensure
    ActiveSupport::Notifications.unsubscribe(subscriber)
  end

  def test_safelists_and_blocklists_come_first_and_cost_nothing
    Rack::Attack.safelist("office") { |req| user_of(req) == "office" }
    Rack::Attack.blocklist("banned") { |req| user_of(req) == "mallory" }
    limit_alice(1)
    assert_equal [200] * 3, statuses("office", 3)
    assert_equal [403, 403], statuses("mallory", 2)
    assert_equal [200, 429], statuses("alice", 2)
    assert_equal ["rl:rack::attack:api:alice"], @server.admin.keys("*")
  end

  def test_the_discriminator_normalizer_shapes_the_key
    limit_alice(1)
    assert_equal [200, 429], [get("  Alice "), get("alice")].map { |r| r.code.to_i }
    assert_equal ["rl:rack::attack:api:alice"], @server.admin.keys("*")
    Rl::RackAttack.prefix = "rl:web:"
    assert_equal 200, get("alice").code.to_i
    assert_includes @server.admin.keys("*"), "rl:web:api:alice"
  end

  def test_beside_rack_attacks_own_throttle_each_fills_its_data_first_match_wins
    Rack::Attack.cache.store = connect(@server)
    Rack::Attack.throttle("own", limit: 3, period: 60) { |req| user_of(req) }
    limit_alice(1)
    r = get("alice")
    assert_equal %w[own api], throttle_data(r).keys
    assert_equal [1, 1], throttle_data(r).values.map { |d| d["count"] }
    r = get("alice")
    assert_equal ["429", "60"], [r.code, r["retry-after"]], "rl's throttle matched second"
    3.times { get("alice") }
    r = get("alice")
    assert_equal ["429", nil], [r.code, r["retry-after"]], "rack-attack's own matched first: its own 429"
  end

  def test_with_no_redis_given_it_uses_the_cache_stores
    Rl::RackAttack.redis = nil
    Rack::Attack.cache.store = connect(@server)
    limit_alice(1)
    assert_equal [200, 429], statuses("alice", 2)
    Rack::Attack.cache.store = ActiveSupport::Cache::RedisCacheStore.new(url: @server.url)
    assert_equal [429], statuses("alice", 1)
    Rack::Attack.cache.store = nil
    assert_equal 500, get("alice").code.to_i, "no Redis anywhere: the app's error"
  end

  def test_an_unreachable_server_throttles_nothing_as_rack_attacks_store
    Rack::Attack.rl_throttle("down", limit: 1, period: 60, redis: Redis.new(port: Servers.free_port, reconnect_attempts: 0)) do |req|
      user_of(req)
    end
    r = Array.new(3) { get("alice") }
    assert_equal [200] * 3, r.map { |x| x.code.to_i }
    assert_empty throttle_data(r.last)
  end

  def test_a_server_without_rl_fails_the_request_saying_so
    none = server(:valkey_none)
    Rack::Attack.rl_throttle("api", limit: 1, period: 60, redis: connect(none)) { |req| user_of(req) }
    assert_equal 500, get("alice").code.to_i
    e = assert_raises(Rl::NotLoadedError) { Rl::Client.new(connect(none)).slide("rl:x", limit: 1, window_ms: 1000) }
    assert_match(/neither the module .* nor the function library/, e.message)
  end

  def test_disabled_rack_attack_calls_nothing
    Rack::Attack.enabled = false
    limit_alice(1)
    assert_equal [200, 200], statuses("alice", 2)
    assert_empty @server.admin.keys("*")
  ensure
    Rack::Attack.enabled = true
  end

  def test_bad_options_are_errors_naming_them
    {
      -> { Rack::Attack.rl_throttle("x", limit: 0, period: 1) { 1 } } => "rl: limit must be an integer of at least 1, not 0",
      -> { Rack::Attack.rl_throttle("x", limit: 1, period: 0.0001) { 1 } } => /period must be a number of seconds that is a whole number of milliseconds/,
      -> { Rack::Attack.rl_throttle("x", limit: 1, period: 1, limiter: :fixed) { 1 } } => /limiter must be one of :slide, :buckets, :throttle/,
      -> { Rack::Attack.rl_throttle("x", limit: 1, period: 1, burst: 2) { 1 } } => "rl: burst: is an option of limiter: :throttle",
      -> { Rack::Attack.rl_throttle("x", limit: 1, period: 1, limt: 2) { 1 } } => 'rl: rl_throttle "x": unknown option :limt',
      -> { Rack::Attack.rl_throttle("x", limit: 1, period: 1) } => /needs a block/,
      -> { Rack::Attack.rl_throttle("x", period: 1) { 1 } } => "Must pass :limit option"
    }.each do |call, message|
      e = assert_raises(ArgumentError, message.to_s) { call.call }
      message.is_a?(Regexp) ? assert_match(message, e.message) : assert_equal(message, e.message)
    end
    assert_empty Rack::Attack.throttles
  end
end
