# frozen_string_literal: true

require "fileutils"
require "socket"
require "tmpdir"
require "redis"

# Real servers for the tests, on free loopback ports, each in a folder of
# its own: Redis 7.0 and Valkey 9.1, with rl's module or with only the
# function library, optionally under libfaketime with a stopped clock the
# test moves, and three-primary clusters. A missing binary fails the test
# that needs it, saying how to get it.
module Servers
  ROOT = File.expand_path("../../../..", __dir__)
  BASE_TIME = Time.utc(2026, 12, 1, 12, 0, 0)
  FAKETIME = ENV.fetch("RL_FAKETIME_LIB", "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1")

  class Missing < StandardError; end

  module_function

  def binary(flavor)
    if flavor == :redis7
      path = ENV["RL_REDIS7"] || ENV["PATH"].split(":").map { |d| File.join(d, "redis-server") }
                                            .find { |p| File.executable?(p) } || "/usr/bin/redis-server"
      raise Missing, "redis-server (Redis 7.0) not found: run make deps or set RL_REDIS7" unless File.executable?(path)
    else
      path = ENV["RL_VALKEY9"] || File.join(ROOT, ".deps/valkey/valkey-server")
      raise Missing, "valkey-server 9.1 not found at #{path}: run make deps or set RL_VALKEY9" unless File.executable?(path)
    end
    path
  end

  def module_path
    path = ENV["RL_MODULE"] || File.join(ROOT, "target/release/librl.so")
    raise Missing, "the module is not at #{path}: run make build or set RL_MODULE" unless File.file?(path)

    path
  end

  def library
    File.read(File.join(ROOT, "functions/rl.lua"))
  end

  def free_port
    server = TCPServer.new("127.0.0.1", 0)
    server.addr[1]
  ensure
    server&.close
  end

  # One running server.
  class Server
    attr_reader :port, :dir, :flavor, :edition, :now

    # edition: :module (--loadmodule), :library (FUNCTION LOAD), :none.
    def initialize(flavor, edition, stopped: false, extra: [])
      @flavor = flavor
      @edition = edition
      @dir = Dir.mktmpdir("rl-ruby-")
      env = {}
      if stopped
        raise Missing, "libfaketime not found at #{FAKETIME}: run make deps or set RL_FAKETIME_LIB" unless File.file?(FAKETIME)

        @clock = File.join(@dir, "faketime")
        set_clock(BASE_TIME)
        env = { "TZ" => "UTC", "LD_PRELOAD" => FAKETIME, "FAKETIME_TIMESTAMP_FILE" => @clock, "FAKETIME_NO_CACHE" => "1" }
      end
      bin = Servers.binary(flavor)
      last = nil
      # A port found free can be taken before the server binds it: retry.
      5.times do
        @port = Servers.free_port
        log = File.join(@dir, "server-#{@port}.log")
        args = [bin, "--port", @port.to_s, "--bind", "127.0.0.1", "--dir", @dir, "--save", "", "--appendonly", "no",
                "--daemonize", "no", "--logfile", log]
        args += ["--loadmodule", Servers.module_path] if edition == :module
        args += extra.respond_to?(:call) ? extra.call : extra
        @pid = Process.spawn(env, *args, %i[out err] => File::NULL)
        return loaded if ready?

        stop_process
        last = File.exist?(log) ? File.read(log) : ""
        raise "#{bin} did not start; its log:\n#{last}" unless last.include?("Address already in use")
      end
      raise "#{bin} found no free port; last log:\n#{last}"
    end

    def url
      "redis://127.0.0.1:#{port}"
    end

    # A new connection (the tests' own, or the app's).
    def redis(**options)
      Redis.new(host: "127.0.0.1", port: port, reconnect_attempts: 0, **options)
    end

    def admin
      @admin ||= redis
    end

    def stopped?
      !@clock.nil?
    end

    # Stops the server's clock at time (stopped servers only).
    def set_clock(time)
      raise "set_clock on a server whose clock runs" unless @clock

      @now = time
      t = time.utc
      # libfaketime reads the fraction as a double: 500 ns more keeps whole
      # µs from coming out one short.
      File.write("#{@clock}.part", format("%s.%06d500\n", t.strftime("%Y-%m-%d %H:%M:%S"), t.usec))
      File.rename("#{@clock}.part", @clock) # the server never reads half a file
    end

    def advance(seconds)
      set_clock(@now + seconds)
    end

    # An empty keyspace, the clock back at BASE_TIME; the library stays.
    def reset
      admin.flushall
      set_clock(BASE_TIME) if stopped?
    end

    def load_library
      admin.call("function", "load", "replace", Servers.library)
    end

    def stop
      @admin&.close
      stop_process
      FileUtils.rm_rf(@dir)
    end

    private

    def loaded
      load_library if edition == :library
      self
    end

    def ready?
      deadline = Time.now + 10
      while Time.now < deadline
        return false if Process.waitpid(@pid, Process::WNOHANG)

        begin
          r = redis(connect_timeout: 1)
          return true if r.ping == "PONG"
        rescue Redis::BaseError
          sleep 0.02
        ensure
          r&.close
        end
      end
      false
    end

    def stop_process
      return unless @pid

      Process.kill("KILL", @pid)
      Process.wait(@pid)
    rescue Errno::ESRCH, Errno::ECHILD
      nil
    ensure
      @pid = nil
    end
  end

  # Three primaries with every slot assigned, each node with the edition.
  class Cluster
    attr_reader :nodes, :edition

    def initialize(flavor, edition)
      @edition = edition
      @nodes = []
      3.times do
        cluster_args = lambda do
          ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
           "--cluster-port", Servers.free_port.to_s, "--cluster-node-timeout", "5000"]
        end
        @nodes << Server.new(flavor, edition, extra: cluster_args)
      end
      out = IO.popen(["redis-cli", "--cluster", "create", *@nodes.map { |n| "127.0.0.1:#{n.port}" },
                      "--cluster-replicas", "0", "--cluster-yes"], err: %i[child out], &:read)
      raise "redis-cli --cluster create failed:\n#{out}" unless $?.success?

      deadline = Time.now + 30
      @nodes.each do |n|
        until n.admin.call("cluster", "info").include?("cluster_state:ok")
          raise "the cluster did not reach cluster_state:ok" if Time.now > deadline

          sleep 0.05
        end
      end
    rescue StandardError
      stop
      raise
    end

    # A redis-rb Cluster client (COMMAND is asked once, at its start).
    def redis(**options)
      Redis.new(cluster: @nodes.map(&:url), reconnect_attempts: 0, **options)
    end

    # Which node holds key.
    def node_of(key)
      @nodes.find { |n| n.admin.keys("*").include?(key) }
    end

    def reset
      @nodes.each { |n| n.admin.flushall }
    end

    def stop
      @nodes.each(&:stop)
    end
  end

  # The servers the tests share, started when a test first asks and
  # stopped when the run ends.
  @shared = {}
  SPECS = {
    redis7_module: [:redis7, :module, false],
    redis7_library: [:redis7, :library, false],
    valkey_module: [:valkey9, :module, false],
    valkey_library: [:valkey9, :library, false],
    valkey_module_stopped: [:valkey9, :module, true],
    valkey_library_stopped: [:valkey9, :library, true],
    valkey_none: [:valkey9, :none, false]
  }.freeze

  def shared(name)
    @shared[name] ||= if name.to_s.start_with?("cluster_")
                        flavor, edition = name == :cluster_redis7_module ? %i[redis7 module] : %i[valkey9 library]
                        Cluster.new(flavor, edition)
                      else
                        flavor, edition, stopped = SPECS.fetch(name)
                        Server.new(flavor, edition, stopped: stopped)
                      end
  end

  def stop_all
    @shared.each_value(&:stop)
    @shared.clear
  end
end
