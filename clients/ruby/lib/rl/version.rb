# frozen_string_literal: true

module Rl
  # rl's release version: the module's, the function library's and this gem's.
  VERSION = "1.0.0"
end
