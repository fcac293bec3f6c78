# frozen_string_literal: true

require_relative "lib/rl/version"

# Built by scripts/dist (make dist), which stages lib/ with the
# repository's LICENSE and its function library as rl-<version>.lua beside
# this file: both go into the gem.
Gem::Specification.new do |s|
  s.name = "rl"
  s.version = Rl::VERSION
  s.summary = "rl's rate limits inside Redis and Valkey from Ruby: typed calls, a sliding-window " \
              "rack-attack throttle and cache store, a Rails rate_limit store"
  s.description = "Calls rl (a Redis/Valkey module, or its function library for managed services) with " \
                  "one command per decision: Rl::Client's typed calls; Rack::Attack.rl_throttle, a sliding " \
                  "window in place of rack-attack's fixed one; Rl::RackAttack::Store for rack-attack's own " \
                  "throttle; Rl::RateLimitStore for Rails' rate_limit."
  s.authors = ["the rl authors"]
  s.license = "MIT"
  s.required_ruby_version = ">= 3.1"
  library = "rl-#{Rl::VERSION}.lua"
  missing = ["LICENSE", library].reject { |f| File.file?(File.join(__dir__, f)) }
  raise "rl.gemspec: #{missing.join(" and ")} not beside it: build the gem with scripts/dist" unless missing.empty?

  s.files = Dir.chdir(__dir__) { Dir["lib/**/*.rb"].sort } + ["LICENSE", library, "README.md"]
  s.require_paths = ["lib"]
  # The connection (redis-rb 4 or 5, or a RedisClient) and rack-attack are
  # the application's own: nothing is pulled in with the gem.
end
