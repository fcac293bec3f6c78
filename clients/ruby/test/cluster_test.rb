# frozen_string_literal: true

require_relative "test_helper"
require_relative "client_test"

# Three-primary clusters through redis-rb's built-in Cluster client: Redis
# 7.0 with the module, Valkey 9.1 with only the library (loaded on every
# primary). rl_throttle over HTTP for users whose keys sit on all three
# nodes, each key on one node; the typed calls, RL.ALL on a hash tag.
class ClusterTest < Minitest::Test
  include RackAttackTest

  USERS = Array.new(12) { |i| "user#{i}" }

  def cluster(name)
    c = Servers.shared(name)
    c.reset
    c
  rescue Servers::Missing => e
    flunk e.message
  end

  %i[cluster_redis7_module cluster_valkey_library].each do |name|
    define_method("test_#{name}: rl_throttle over HTTP, each user's key on one node") do
      c = cluster(name)
      Rl::RackAttack.redis = c.redis
      Rack::Attack.rl_throttle("api", limit: 2, period: 60) { |req| user_of(req) }
      USERS.each do |user|
        assert_equal [200, 200, 429], statuses(user, 3), user
      end
      nodes = USERS.map { |u| c.node_of("rl:rack::attack:api:#{u}") }
      assert_equal 3, nodes.compact.uniq.size, "the users' keys on all three nodes"
      assert_equal USERS.size, c.nodes.sum { |n| n.admin.dbsize }, "one key per user, on one node"
    ensure
      Rl::RackAttack.redis&.close
    end

    ClientTest::CASES.each do |what, (calls, replies)|
      define_method("test_#{name}: #{what}") do
        redis = cluster(name).redis
        assert_replies replies.call(self), calls.call(Rl::Client.new(redis)), false, what
      ensure
        redis&.close
      end
    end

    define_method("test_#{name}: typed calls route by key") do
      c = cluster(name)
      redis = c.redis
      rl = Rl::Client.new(redis)
      assert_equal [true, true, false], Array.new(3) { rl.slide("rl:c:s", limit: 2, window_ms: 60_000).allowed? }
      refute rl.peek("rl:c:s", Rl::Slide.new(limit: 2, window_ms: 60_000)).allowed?
      all = rl.all(["rl:{org}:u", Rl::Slide.new(limit: 1, window_ms: 1000)], ["rl:{org}:o", Rl::Fixed.new(limit: 5, window_ms: 1000)])
      assert_equal [true, 4], [all.allowed?, all.clauses[1].remaining]
      e = assert_raises(Redis::CommandError) do
        rl.all(["rl:a", Rl::Slide.new(limit: 1, window_ms: 1000)], ["rl:b", Rl::Slide.new(limit: 1, window_ms: 1000)])
      end
      assert_match(/CROSSSLOT/, e.message)
      lease = rl.acquire("rl:c:jobs", limit: 1, lease_ms: 1000).lease
      assert rl.release("rl:c:jobs", lease).allowed?
      rl.block("rl:c:b", :fixed, 1000)
      refute rl.fixed("rl:c:b", limit: 1, window_ms: 1000).allowed?
      assert_equal c.edition, rl.edition
    ensure
      redis&.close
    end
  end
end
