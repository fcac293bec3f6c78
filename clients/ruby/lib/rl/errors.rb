# frozen_string_literal: true

module Rl
  # Raised by this gem for what is not the server's own error (those are the
  # client's Redis::CommandError, with the server's message).
  class Error < StandardError; end

  # The server has neither the module nor the function library.
  class NotLoadedError < Error
    def initialize(detail = nil)
      super("rl is not loaded on this server: it has neither the module (RL.SLIDE, ...) nor the function " \
            "library (FCALL rl_slide#{detail ? ": #{detail}" : ""}). Load the module (loadmodule /path/to/librl.so) " \
            "or the library (redis-cli -x FUNCTION LOAD REPLACE < rl-#{VERSION}.lua, on every primary of a " \
            "cluster), or pass load_functions: true to let the client load the copy this gem ships (one server)")
    end
  end

  # How the clients this gem works with report errors, told apart by class
  # name so that neither redis-rb nor redis-client need be installed.
  module Errors
    SERVER = %w[Redis::CommandError RedisClient::CommandError].freeze
    CONNECTION = %w[Redis::BaseConnectionError RedisClient::ConnectionError].freeze

    module_function

    def kind?(error, names)
      error.class.ancestors.any? { |a| names.include?(a.name) }
    end

    # An error the server answered (a bad argument, WRONGTYPE, NOPERM, ...).
    def server?(error)
      kind?(error, SERVER)
    end

    # The server could not be reached, or the connection broke.
    def connection?(error)
      kind?(error, CONNECTION)
    end

    def unknown_command?(error)
      server?(error) && error.message.downcase.include?("unknown command")
    end

    def function_not_found?(error)
      server?(error) && error.message.downcase.include?("function not found")
    end

    def noperm?(error)
      server?(error) && error.message.start_with?("NOPERM")
    end
  end
end
