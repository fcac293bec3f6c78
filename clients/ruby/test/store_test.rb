# frozen_string_literal: true

require_relative "test_helper"

# Rl::RackAttack::Store as Rack::Attack.cache.store: rack-attack's own
# throttle, Fail2Ban and reset! over HTTP, each count one RL.FIXED, on both
# editions; against rack-attack's own Redis store on the same server, the
# same answers.
class StoreTest < Minitest::Test
  include RackAttackTest

  %i[valkey_module_stopped valkey_library_stopped redis7_module].each do |name|
    define_method("test_#{name}: rack-attack's throttle counts through RL.FIXED as through its Redis store") do
      s = server(name)
      Rack::Attack.throttle("api", limit: 3, period: 3600) { |req| user_of(req) }
      # rack-attack's key names the hour: an hour that turns during the
      # run splits the counts, and the run is made again.
      2.times do |attempt|
        s.reset
        hour = Time.now.to_i / 3600
        results = [Rl::RackAttack::Store.new(connect(s)), connect(s)].map do |store|
          Rack::Attack.cache.store = store
          responses = Array.new(5) { get("alice") }
          [responses.map { |r| r.code.to_i },
           responses.select { |r| r.code == "200" }.map { |r| throttle_data(r).dig("api", "count") }]
        end
        next if attempt.zero? && Time.now.to_i / 3600 != hour

        assert_equal [[200, 200, 200, 429, 429], [1, 2, 3]], results.first
        assert_equal results.last, results.first, "the same as rack-attack's Redis store"
        ours = "rl:rack::attack:#{hour}:api:alice"
        theirs = "rack::attack:#{hour}:api:alice"
        assert_equal [ours, theirs].sort, s.admin.keys("*").sort
        assert_equal %w[5 5], [s.admin.get(ours), s.admin.get(theirs)], "every hit counted, as INCRBY counts"
        ttl = 3600 - Time.now.to_i % 3600 + 1
        assert_in_delta ttl * 1000, s.admin.pttl(ours), 2000, "to the hour's end, as rack-attack's EXPIRE" unless s.stopped?
        break
      end
    end
  end

  def test_fail2ban_and_reset_through_the_store
    s = server(:valkey_module_stopped)
    store = Rl::RackAttack::Store.new(connect(s))
    Rack::Attack.cache.store = store
    Rack::Attack.blocklist("logins") do |req|
      Rack::Attack::Fail2Ban.filter(user_of(req), maxretry: 2, findtime: 60, bantime: 600) { req.path == "/fail" }
    end
    assert_equal [403, 403, 403], statuses("eve", 3, "/fail")
    assert_equal [403], statuses("eve", 1, "/"), "banned"
    assert_equal "1", s.admin.get("rl:rack::attack:fail2ban:ban:eve")
    assert_includes 599_000..600_000, s.admin.pttl("rl:rack::attack:fail2ban:ban:eve")
    s.admin.set("rack::attack:foreign", "x")
    s.admin.set("rl:other", "y")
    Rack::Attack.reset!
    assert_equal ["rack::attack:foreign", "rl:other"], s.admin.keys("*").sort, "only the store's own keys went"
    assert_equal [200], statuses("eve", 1, "/")
  end

  def test_the_stores_calls_and_their_errors
    s = server(:valkey_library_stopped)
    store = Rl::RackAttack::Store.new(connect(s), prefix: "rl:x:")
    assert_equal [1, 3], [store.increment("k", 1, expires_in: 10), store.increment("k", 2, expires_in: 10)]
    assert_equal "3", store.read("k")
    assert_equal 10_000, s.admin.pttl("rl:x:k")
    store.write("w", 7, expires_in: 5)
    assert_equal ["7", 5000], [store.read("w"), s.admin.pttl("rl:x:w")]
    store.delete("w")
    assert_nil store.read("w")
    assert_raises(ArgumentError) { store.increment("k", 1) }
    e = assert_raises(ArgumentError) { store.increment("k", 1, expires_in: 0.0001) }
    assert_match(/expires_in must be/, e.message)
    down = Rl::RackAttack::Store.new(Redis.new(port: Servers.free_port, reconnect_attempts: 0))
    assert_nil down.increment("k", 1, expires_in: 10), "unreachable: nil, as rack-attack's Redis store"
    assert_nil down.read("k")
  end
end
