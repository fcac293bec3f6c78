# frozen_string_literal: true

$LOAD_PATH.unshift(File.expand_path("../lib", __dir__))
require "minitest/autorun"
require "rl"
require_relative "support/servers"
require_relative "support/http_app"

Minitest.after_run do
  HttpApp.stop_shared
  Servers.stop_all
end

module RlTest
  # A shared server (Servers::SPECS), its keyspace emptied and its clock
  # (if stopped) back at Servers::BASE_TIME.
  def server(name)
    s = Servers.shared(name)
    s.reset
    s
  rescue Servers::Missing => e
    flunk e.message
  end

  BASE_MS = (Servers::BASE_TIME.to_r * 1000).to_i

  def decision(allowed, remaining, retry_after_ms, reset_after_ms, granted = nil, lease: nil, oldest_ms: nil)
    Rl::Decision.new(allowed: allowed == 1 || allowed == true, remaining: remaining, retry_after_ms: retry_after_ms,
                     reset_after_ms: reset_after_ms, granted: granted || (allowed == 1 ? 1 : 0),
                     oldest_ms: oldest_ms, lease: lease)
  end

  # A table's replies: Decisions by assert_decision, waits (Integers) to
  # the ms on a stopped clock and within a second on a running one.
  def assert_replies(want, got, exact, what)
    assert_equal want.size, got.size, what
    want.zip(got).each_with_index do |(w, g), i|
      if w.is_a?(Rl::Decision)
        assert_decision w, g, exact, "#{what}, reply #{i + 1}"
      elsif w.is_a?(Integer) && !exact
        assert_in_delta w, g, 1000, "#{what}, reply #{i + 1}"
      else
        assert_equal w, g, "#{what}, reply #{i + 1}"
      end
    end
  end

  # On a stopped clock a Decision is compared whole; on a running one the
  # counts exactly and the waits within the second the calls may take. A
  # lease of :any wants some lease id.
  def assert_decision(want, got, exact, what = "")
    assert_kind_of Rl::Decision, got, what
    if want.lease == :any
      assert_kind_of String, got.lease, "#{what}: lease"
      refute_empty got.lease, "#{what}: lease"
    else
      assert_nil got.lease, "#{what}: lease"
    end
    fields = exact ? %i[allowed remaining retry_after_ms reset_after_ms granted oldest_ms] : %i[allowed remaining granted]
    fields.each do |f|
      want[f].nil? ? assert_nil(got[f], "#{what}: #{f}") : assert_equal(want[f], got[f], "#{what}: #{f}")
    end
    return if exact

    %i[retry_after_ms reset_after_ms oldest_ms].each do |f|
      next if want[f].nil? && got[f].nil?

      assert_operator got[f], :<=, want[f], "#{what}: #{f}"
      assert_operator got[f], :>=, [want[f] - 1000, 0].max, "#{what}: #{f}"
    end
  end
end

# As in a Rails app, ActiveSupport before rack-attack: rack-attack takes
# ActiveSupport::Notifications as its notifier when it is loaded.
require "active_support"
require "active_support/notifications"
require "rl/rack_attack"

# rack-attack's configuration is global: each test starts from none, with
# the shared app (HttpApp.shared: rack-attack in front of an echo of its
# throttle data) and its own connections, closed after it.
module RackAttackTest
  include RlTest

  def setup
    super
    Rack::Attack.clear_configuration
    Rack::Attack.enabled = true
    Rack::Attack.cache.store = nil
    Rl::RackAttack.redis = nil
    Rl::RackAttack.prefix = nil
    @connections = []
  end

  def teardown
    Rack::Attack.clear_configuration
    Rack::Attack.cache.store = nil
    Rl::RackAttack.redis = nil
    @connections.each(&:close)
    super
  end

  def app
    HttpApp.shared
  end

  # A connection of the app's, closed after the test.
  def connect(server, **options)
    r = server.redis(**options)
    @connections << r
    r
  end

  # The user is the discriminator: X-User.
  def user_of(req)
    req.get_header("HTTP_X_USER")
  end

  def get(user, path = "/")
    app.get(path, "X-User" => user)
  end

  def statuses(user, n, path = "/")
    Array.new(n) { get(user, path).code.to_i }
  end

  def throttle_data(response)
    JSON.parse(response.body)
  end
end
