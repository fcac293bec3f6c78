# frozen_string_literal: true

require_relative "test_helper"
require_relative "client_test"

# A user made by the README's ACL recipe, as written (+@ratelimit ~rl:*;
# module ACL categories: Valkey 9.1): the typed calls, rl_throttle and
# rack-attack's throttle on Rl::RackAttack::Store limit with nothing else
# granted (COMMAND refused to it), and write only rl: keys.
class AclTest < Minitest::Test
  include RackAttackTest

  def recipe
    text = File.read(File.join(Servers::ROOT, "README.md"))
    line = text[/`(ACL SETUSER [^`]+)`/, 1] or flunk "README.md has no `ACL SETUSER ...` recipe"
    line.split
  end

  # The README's user on s, made as written; its connection.
  def recipe_user(s)
    words = recipe
    s.admin.call(*words)
    @user = words[2]
    connect(s, username: @user, password: words.find { |w| w.start_with?(">") }[1..])
  end

  def teardown
    Servers.shared(:valkey_module).admin.call("acl", "deluser", @user) if @user
    super
  end

  # Every typed call of ClientTest's table, as the recipe's user.
  ClientTest::CASES.each do |what, (calls, replies)|
    define_method("test_the_readme_recipes_user: #{what}") do
      s = server(:valkey_module)
      got = calls.call(Rl::Client.new(recipe_user(s)))
      assert_replies replies.call(self), got, false, what
      assert_empty s.admin.keys("*").reject { |k| k.start_with?("rl:") }
    end
  end

  def test_the_readme_recipes_user
    s = server(:valkey_module)
    as_user = recipe_user(s)
    e = assert_raises(Redis::CommandError) { as_user.call("command", "info", "rl.slide") }
    assert_match(/\ANOPERM/, e.message, "the recipe's user may send COMMAND: the test shows nothing")

    c = Rl::Client.new(as_user)
    assert_equal [true, false], Array.new(2) { c.slide("rl:ruby:acl", limit: 1, window_ms: 60_000).allowed? }
    assert_equal :module, Rl::Client.new(as_user).edition, "a fresh client reads rl:probe, which the recipe grants"
    fresh = Rl::Client.new(as_user)
    e = assert_raises(Redis::CommandError) { fresh.slide("other:ruby:acl", limit: 1, window_ms: 60_000) }
    assert_match(/\ANOPERM/, e.message, "a key outside rl: is the caller's NOPERM")
    assert fresh.slide("rl:ruby:acl2", limit: 1, window_ms: 60_000).allowed?
    assert fresh.all(["rl:{ruby}:a", Rl::Fixed.new(limit: 1, window_ms: 1000)]).allowed?
    lease = fresh.acquire("rl:ruby:jobs", limit: 1, lease_ms: 1000).lease
    assert fresh.release("rl:ruby:jobs", lease).allowed?

    Rl::RackAttack.redis = as_user
    Rack::Attack.rl_throttle("api", limit: 2, period: 60) { |req| req.path == "/" && user_of(req) }
    Rack::Attack.cache.store = Rl::RackAttack::Store.new(as_user)
    Rack::Attack.throttle("own", limit: 2, period: 60) { |req| req.path == "/own" && user_of(req) }
    assert_equal [200, 200, 429], statuses("alice", 3)
    assert_equal [200, 200, 429], statuses("alice", 3, "/own")

    keys = s.admin.keys("*")
    assert_equal [], keys.reject { |k| k.start_with?("rl:") }
    assert_equal 5, keys.size, "the typed calls' three, rl_throttle's and the store's: #{keys}"
  end
end
