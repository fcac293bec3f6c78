# frozen_string_literal: true

require_relative "test_helper"

# Every typed call, its options and its errors, on both editions: Valkey 9.1
# with a stopped clock (replies compared whole) and Redis 7.0 on the real
# clock (counts exact, waits within a second), each with the module and
# with only the function library.
class ClientTest < Minitest::Test
  include RlTest

  SERVERS = %i[valkey_module_stopped valkey_library_stopped redis7_module redis7_library].freeze

  S60 = Rl::Slide.new(limit: 2, window_ms: 60_000)

  # name => [calls on a fresh keyspace, the replies they must give]
  CASES = {
    "slide: admits to the limit, then waits the window" => [
      ->(c) { Array.new(3) { c.slide("rl:t:s", limit: 2, window_ms: 60_000) } },
      ->(t) { [t.decision(1, 1, 0, 60_000), t.decision(1, 0, 0, 60_000), t.decision(0, 0, 60_000, 60_000)] }
    ],
    "slide: cost, then upto grants what fits" => [
      lambda do |c|
        [c.slide("rl:t:u", limit: 5, window_ms: 1000, cost: 3),
         c.slide("rl:t:u", limit: 5, window_ms: 1000, cost: 3, upto: true)]
      end,
      ->(t) { [t.decision(1, 2, 0, 1000, 3), t.decision(1, 0, 0, 1000, 2)] }
    ],
    "slide: block_ms blocks the key at its first denial" => [
      lambda do |c|
        [c.slide("rl:t:k", limit: 1, window_ms: 1000), c.slide("rl:t:k", limit: 1, window_ms: 1000, block_ms: 5000),
         c.slide("rl:t:k", limit: 1, window_ms: 1000)]
      end,
      ->(t) { [t.decision(1, 0, 0, 1000), t.decision(0, 0, 5000, 5000), t.decision(0, 0, 5000, 5000)] }
    ],
    "buckets: precision and cost" => [
      ->(c) { [c.buckets("rl:t:b", limit: 10, window_ms: 60_000, precision_ms: 1000, cost: 4)] },
      ->(t) { [t.decision(1, 6, 0, 60_999, 4)] }
    ],
    "throttle: a burst of two, then paced; quantity 0 only looks" => [
      lambda do |c|
        Array.new(3) { c.throttle("rl:t:t", max_burst: 1, count: 1, period_ms: 1000) } +
          [c.throttle("rl:t:t", max_burst: 1, count: 1, period_ms: 1000, quantity: 0)]
      end,
      lambda do |t|
        [t.decision(1, 1, 0, 1000), t.decision(1, 0, 0, 2000), t.decision(0, 0, 1000, 2000), t.decision(1, 0, 0, 2000, 0)]
      end
    ],
    "fixed: cost counts against the window" => [
      ->(c) { [c.fixed("rl:t:f", limit: 3, window_ms: 60_000, cost: 2), c.fixed("rl:t:f", limit: 3, window_ms: 60_000, cost: 2)] },
      ->(t) { [t.decision(1, 1, 0, 60_000, 2), t.decision(0, 1, 60_000, 60_000, 0)] }
    ],
    "peek: what one more would get, writing nothing; oldest" => [
      lambda do |c|
        c.slide("rl:t:p", limit: 2, window_ms: 60_000)
        [c.peek("rl:t:p", S60), c.peek("rl:t:p", S60, oldest: true), c.peek("rl:t:p", S60)]
      end,
      lambda do |t|
        [t.decision(1, 0, 0, 60_000), t.decision(1, 0, 0, 60_000, oldest_ms: 60_000), t.decision(1, 0, 0, 60_000)]
      end
    ],
    "refund: gives back the limiter's units" => [
      lambda do |c|
        c.slide("rl:t:r", limit: 2, window_ms: 60_000)
        [c.refund("rl:t:r", S60), c.refund("rl:t:r", S60)]
      end,
      ->(t) { [t.decision(1, 1, 0, 60_000, 1), t.decision(0, 1, 0, 60_000, 0)] }
    ],
    "charge: records past the limit; the next call waits" => [
      lambda do |c|
        [c.charge("rl:t:c", Rl::Fixed.new(limit: 2, window_ms: 60_000), cost: 5),
         c.fixed("rl:t:c", limit: 2, window_ms: 60_000)]
      end,
      ->(t) { [t.decision(1, 0, 60_000, 60_000, 5), t.decision(0, 0, 60_000, 60_000)] }
    ],
    "all: every clause or none, atomically" => [
      lambda do |c|
        clauses = [["rl:{u}:s", Rl::Slide.new(limit: 1, window_ms: 1000)],
                   ["rl:{u}:t", Rl::Throttle.new(max_burst: 0, count: 1, period_ms: 2000)]]
        a = c.all(*clauses)
        b = c.all(clauses)
        [a.allowed?, a.retry_after_ms, *a.clauses, b.allowed?, b.retry_after_ms, *b.clauses]
      end,
      lambda do |t|
        [true, 0, t.decision(1, 0, 0, 1000), t.decision(1, 0, 0, 2000),
         false, 2000, t.decision(0, 0, 1000, 1000), t.decision(0, 0, 2000, 2000)]
      end
    ],
    "acquire, renew, release" => [
      lambda do |c|
        a = c.acquire("rl:t:a", limit: 1, lease_ms: 60_000)
        [a, c.acquire("rl:t:a", limit: 1, lease_ms: 60_000), c.renew("rl:t:a", a.lease, lease_ms: 120_000),
         c.release("rl:t:a", a.lease), c.release("rl:t:a", a.lease)]
      end,
      lambda do |t|
        [t.decision(1, 0, 0, 60_000, lease: :any), t.decision(0, 0, 60_000, 60_000),
         t.decision(1, 1, 120_000, 120_000), t.decision(1, 0, 0, 0), t.decision(0, 0, 0, 0)]
      end
    ],
    "acquire with an id" => [
      ->(c) { [c.acquire("rl:t:i", limit: 2, lease_ms: 1000, id: "job-7").lease] },
      ->(_) { ["job-7"] }
    ]
  }.freeze

  SERVERS.each do |name|
    CASES.each do |what, (calls, replies)|
      define_method("test_#{name}: #{what}") do
        s = server(name)
        got = calls.call(Rl::Client.new(s.redis))
        assert_replies replies.call(self), got, s.stopped?, what
      end
    end

    define_method("test_#{name}: block and unblock by hand") do
      s = server(name)
      c = Rl::Client.new(s.redis)
      now_ms = s.admin.time.then { |sec, usec| sec * 1000 + usec / 1000 }
      ends = c.block("rl:t:k", :slide, 5000)
      assert_in_delta now_ms + 5000, ends, s.stopped? ? 0 : 1000
      denied = c.slide("rl:t:k", limit: 1, window_ms: 1000)
      assert_decision decision(0, 0, 5000, 5000), denied, s.stopped?
      assert_equal [true, false], [c.unblock("rl:t:k", Rl::Slide.new(limit: 1, window_ms: 1000)), c.unblock("rl:t:k", "slide")]
      assert c.slide("rl:t:k", limit: 1, window_ms: 1000).allowed?
    end

    define_method("test_#{name}: a server error raises with the server's message") do
      c = Rl::Client.new(server(name).redis)
      e = assert_raises(Redis::CommandError) { c.slide("rl:t:e", limit: 2_000_000, window_ms: 1000) }
      assert_equal "ERR limit must be an integer from 1 to 1000000", e.message
      server(name).admin.lpush("rl:t:list", "x")
      e = assert_raises(Redis::CommandError) { c.fixed("rl:t:list", limit: 1, window_ms: 1000) }
      assert_match(/\AWRONGTYPE/, e.message)
      # The edition stays found: the next call goes through.
      assert c.slide("rl:t:e", limit: 2, window_ms: 1000).allowed?
    end

    define_method("test_#{name}: wait_ms waits on the module, is refused by the library") do
      s = server(name)
      c = Rl::Client.new(s.redis)
      if s.edition == :module
        assert c.slide("rl:t:w", limit: 1, window_ms: 1000, wait_ms: 10).allowed?
      else
        e = assert_raises(Redis::CommandError) { c.slide("rl:t:w", limit: 1, window_ms: 1000, wait_ms: 10) }
        assert_equal "ERR unknown option 'WAIT'", e.message
      end
    end
  end

  # Each raises before anything is sent: the connection's port has no server.
  BAD = {
    "limit 0" => [->(c) { c.slide("k", limit: 0, window_ms: 1000) }, "rl: limit must be an integer of at least 1, not 0"],
    "a negative cost" => [->(c) { c.fixed("k", limit: 5, window_ms: 1000, cost: -1) },
                          "rl: cost must be an integer of at least 1, not -1"],
    "a window that is not whole ms" => [->(c) { c.buckets("k", limit: 5, window_ms: 1500.5) },
                                        "rl: window_ms must be a whole number of milliseconds, at least 1, not 1500.5"],
    "a String limit" => [->(c) { c.slide("k", limit: "5", window_ms: 1000) },
                         "rl: limit must be an integer of at least 1, not \"5\""],
    "block_ms 0" => [->(c) { c.slide("k", limit: 1, window_ms: 1000, block_ms: 0) },
                     "rl: block_ms must be a whole number of milliseconds, at least 1, not 0"],
    "a negative max_burst" => [->(c) { c.throttle("k", max_burst: -1, count: 1, period_ms: 1000) },
                               "rl: max_burst must be an integer of at least 0, not -1"],
    "charge cost 0" => [->(c) { c.charge("k", Rl::Fixed.new(limit: 1, window_ms: 1000), cost: 0) },
                        "rl: cost must be an integer of at least 1, not 0"],
    "an empty lease" => [->(c) { c.release("k", "") },
                         "rl: lease must be the lease id (a non-empty String), not \"\""],
    "block on ACQUIRE" => [->(c) { c.block("k", :acquire, 1000) },
                           "rl: limiter must be one of SLIDE, BUCKETS, THROTTLE, FIXED (or its Rl:: value), not :acquire"],
    "peek of a name" => [->(c) { c.peek("k", :slide) }, /limiter must be an Rl::Slide/],
    "all with no clause" => [->(c) { c.all }, "rl: all needs at least one [key, limiter] clause"]
  }.freeze

  BAD.each do |what, (call, message)|
    define_method("test_bad argument, #{what}: ArgumentError before anything is sent") do
      c = Rl::Client.new(Redis.new(port: Servers.free_port, reconnect_attempts: 0))
      e = assert_raises(ArgumentError) { call.call(c) }
      message.is_a?(Regexp) ? assert_match(message, e.message) : assert_equal(message, e.message)
    end
  end

  def test_a_client_needs_a_connection
    e = assert_raises(ArgumentError) { Rl::Client.new("redis://localhost") }
    assert_match(/redis must be a Redis/, e.message)
  end
end
