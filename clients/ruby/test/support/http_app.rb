# frozen_string_literal: true

require "json"
require "net/http"
require "rack"
require "rack/handler/webrick"
require "webrick"

# A Rack app served over HTTP by WEBrick on a free loopback port, in this
# process (rack-attack's configuration, notifications and the stopped
# clocks are the test's to set). Requests go through Net::HTTP, one
# connection each, as separate clients would send them.
class HttpApp
  attr_reader :port

  def initialize(app)
    @server = WEBrick::HTTPServer.new(BindAddress: "127.0.0.1", Port: 0, Logger: WEBrick::Log.new(File::NULL),
                                      AccessLog: [])
    @server.mount("/", Rack::Handler::WEBrick, app)
    @port = @server.config[:Port]
    @thread = Thread.new { @server.start }
    deadline = Time.now + 10
    until @server.status == :Running
      raise "WEBrick did not start" if Time.now > deadline

      sleep 0.01
    end
  end

  def get(path = "/", headers = {})
    Net::HTTP.start("127.0.0.1", port, open_timeout: 5, read_timeout: 30) do |http|
      http.request(Net::HTTP::Get.new(path, headers))
    end
  end

  def stop
    @server.shutdown
    @thread.join(5)
  end

  # The app behind rack-attack in every test: it answers 200 with the
  # throttle data rack-attack left in the request (JSON).
  ECHO = lambda do |env|
    body = JSON.dump(env["rack.attack.throttle_data"] || {})
    [200, { "content-type" => "application/json" }, [body]]
  end

  def self.shared
    @shared ||= new(Rack::Builder.new do
      use Rack::Attack
      run ECHO
    end)
  end

  def self.stop_shared
    @shared&.stop
    @shared = nil
  end
end
