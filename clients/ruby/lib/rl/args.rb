# frozen_string_literal: true

module Rl
  # Argument checks made before anything is sent: a bad argument raises an
  # ArgumentError naming it. Upper bounds are the server's to check (its
  # error names the argument too); these catch what a Ruby caller gets
  # wrong by type or sign, which the server would otherwise read otherwise
  # (1.5 as "1.5", a Float window as a string it refuses).
  module Args
    module_function

    def integer(value, name, min)
      unless value.is_a?(Integer) && value >= min
        raise ArgumentError, "rl: #{name} must be an integer of at least #{min}, not #{value.inspect}"
      end

      value
    end

    # A count or limit: an Integer, at least 1.
    def positive(value, name)
      integer(value, name, 1)
    end

    # An Integer, at least 0 (THROTTLE's max_burst and quantity).
    def non_negative(value, name)
      integer(value, name, 0)
    end

    # A duration given in milliseconds: a whole number of them, at least 1.
    # An integral Float or Rational (1500.0) is taken as that Integer.
    def ms(value, name)
      whole = value.is_a?(Integer) ? value : exact(value)
      unless whole.is_a?(Integer) && whole >= 1
        raise ArgumentError, "rl: #{name} must be a whole number of milliseconds, at least 1, not #{value.inspect}"
      end

      whole
    end

    # A duration given in seconds (Integer, Float, Rational, or an
    # ActiveSupport::Duration such as 1.minute), as whole milliseconds: 0.25
    # is 250; 0.0005 (half a millisecond) is an error, as rl counts in ms.
    def seconds_to_ms(value, name)
      seconds = value.class.name == "ActiveSupport::Duration" ? value.value : value
      exact_seconds = seconds.is_a?(Integer) ? seconds : rational(seconds)
      whole = exact_seconds.nil? ? nil : exact(exact_seconds * 1000)
      unless whole.is_a?(Integer) && whole >= 1
        raise ArgumentError,
              "rl: #{name} must be a number of seconds that is a whole number of milliseconds, " \
              "at least 0.001, not #{value.inspect}"
      end

      whole
    end

    # A Float as the decimal it prints as (0.1 is 1/10, not the binary
    # fraction nearest to it), a Rational as it is; nil for anything else.
    def rational(value)
      case value
      when Rational then value
      when Float then value.finite? ? Rational(value.to_s) : nil
      end
    end

    def exact(value)
      r = value.is_a?(Integer) ? Rational(value) : rational(value)
      r && r.denominator == 1 ? r.to_i : nil
    end
  end
end
