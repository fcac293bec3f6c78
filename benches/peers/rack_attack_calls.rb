# frozen_string_literal: true

# What rack-attack sends per request, and what clients/ruby sends in its
# place, recorded from the code itself (Debian's rack-attack and redis-rb,
# this checkout's clients/ruby/lib) by a stand-in server on a loopback port
# that logs each command and answers as Redis would:
#   <out>/rack_attack.cmds   rack-attack 6.6's throttle on its Redis store
#                            (a Redis as Rack::Attack.cache.store): one
#                            command a line, as it pipelines them
#   <out>/rack_throttle.cmd  Rack::Attack.rl_throttle's one command
#   <out>/rack_store.cmd     rack-attack's throttle on Rl::RackAttack::Store
# Each throttle allows 100 a minute (the callgrind rows' limit), keyed by
# the client's address, written as __rand_int__ (redis-benchmark's
# placeholder). Fails, rather than record a call the bench does not
# expect, when the counts of commands differ from one, one and two.
#   ruby benches/peers/rack_attack_calls.rb OUTDIR
require "socket"
$LOAD_PATH.unshift(File.expand_path("../../clients/ruby/lib", __dir__))
require "redis"
require "rack"
require "rack/attack"
require "rl/rack_attack"

out = ARGV.fetch(0)
ADDRESS = "10.1.2.3"

# A RESP server for one connection at a time: each command's words into
# `log`; integers for Redis's commands, a decision for rl's.
server = TCPServer.new("127.0.0.1", 0)
log = Queue.new
Thread.new do
  loop do
    client = server.accept
    Thread.new(client) do |c|
      while (line = c.gets)
        words = Array.new(line[1..].to_i) do
          size = c.gets[1..].to_i
          c.read(size + 2)[0, size]
        end
        log << words
        # rl's limiters: admitted, one of `limit` (the third word) used.
        c.write(words.first.downcase.start_with?("rl.") ? "*4\r\n:1\r\n:#{words[2].to_i - 1}\r\n:0\r\n:1\r\n" : ":1\r\n")
      end
    end
  end
end

def one_request
  env = Rack::MockRequest.env_for("/", "REMOTE_ADDR" => ADDRESS)
  status, = Rack::Attack.new(->(_) { [200, {}, []] }).call(env)
  raise "rack-attack answered #{status}" unless status == 200
end

def recorded(log, count, what)
  sleep 0.05
  lines = []
  lines << log.pop until log.empty?
  unless lines.size == count
    raise "#{what} sent #{lines.size} commands (#{lines.inspect}), not #{count}: read it again"
  end

  lines.map { |words| words.map { |w| w.gsub(ADDRESS, "__rand_int__") }.join(" ") }
end

# rack-attack's expiry runs to its period's end, so what it sends depends
# on the second it runs in: written as at a period's start (61 s, as
# rack-attack adds 1), so that a bench row's keys outlive its passes.
def at_period_start(line)
  line.sub(/\Aexpire (\S+) \d+\z/, 'expire \\1 61').sub(/\A(rl\.fixed \S+ \d+) \d+ /, '\\1 61000 ')
end

port = server.addr[1]
Rack::Attack.throttle("req/ip", limit: 100, period: 60) { |req| req.ip }
Rack::Attack.cache.store = Redis.new(port: port)
one_request
File.write(File.join(out, "rack_attack.cmds"), recorded(log, 2, "rack-attack's Redis store").map { |l| at_period_start(l) }.join("\n") + "\n")

Rack::Attack.cache.store = Rl::RackAttack::Store.new(Redis.new(port: port))
one_request
File.write(File.join(out, "rack_store.cmd"), at_period_start(recorded(log, 1, "Rl::RackAttack::Store").first) + "\n")

Rack::Attack.clear_configuration
Rl::RackAttack.redis = Redis.new(port: port)
Rack::Attack.rl_throttle("req/ip", limit: 100, period: 60) { |req| req.ip }
one_request
File.write(File.join(out, "rack_throttle.cmd"), recorded(log, 1, "rl_throttle").first + "\n")
