# frozen_string_literal: true

require "rl/version"

module Rl
  # The function library this gem ships: rl-<version>.lua at the gem's
  # root, the release's file byte for byte (scripts/dist copies it in). In
  # a checkout of the repository, where no copy is made, it is the
  # checkout's functions/rl.lua.
  def self.library_path
    root = File.expand_path("../..", __dir__)
    packed = File.join(root, "rl-#{VERSION}.lua")
    return packed if File.file?(packed)

    checkout = File.expand_path("../../functions/rl.lua", root)
    return checkout if File.basename(root) == "ruby" && File.file?(checkout)

    raise Error, "rl: the function library is not in this gem (looked for #{packed})"
  end

  def self.library_source
    File.read(library_path, encoding: "UTF-8")
  end
end
