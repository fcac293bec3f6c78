# frozen_string_literal: true

# rl: rate limiting inside Redis and Valkey. Rl::Client sends rl's
# commands with typed replies; require "rl/rack_attack" for rack-attack's
# rl_throttle and its cache store, "rl/rate_limit_store" for Rails'
# rate_limit.
require "rl/version"
require "rl/errors"
require "rl/args"
require "rl/limiters"
require "rl/decision"
require "rl/library"
require "rl/client"
