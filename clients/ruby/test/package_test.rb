# frozen_string_literal: true

require_relative "test_helper"
require "rubygems/package"
require "tmpdir"

# The gem make dist ships (scripts/dist, as make dist runs it): named for
# Cargo.toml's version, holding lib/, the repository's LICENSE and the
# function library as rl-<version>.lua, byte for byte; installed with
# `gem install --local` into a scratch folder, it loads from there and
# finds its own copy of the library.
class PackageTest < Minitest::Test
  ROOT = Servers::ROOT

  def test_the_version_is_cargos
    cargo = File.read(File.join(ROOT, "Cargo.toml"))[/^version = "([^"]+)"/, 1]
    assert_equal cargo, Rl::VERSION
  end

  def test_scripts_dist_builds_the_gem_and_it_installs_from_the_file_alone
    Dir.mktmpdir("rl-gem-") do |dir|
      out = IO.popen([File.join(__dir__, "../scripts/dist"), dir, Rl::VERSION], err: %i[child out], &:read)
      assert $?.success?, out
      gem = File.join(dir, "rl-#{Rl::VERSION}.gem")
      files = {}
      Gem::Package.new(gem).contents.each { |f| files[f] = true }
      want = ["LICENSE", "README.md", "lib/rl.rb", "lib/rl/rack_attack.rb", "rl-#{Rl::VERSION}.lua"]
      assert_empty want - files.keys, "the gem holds #{files.keys}"
      spec = Gem::Package.new(gem).spec
      assert_equal ["rl", Rl::VERSION, ["MIT"], []], [spec.name, spec.version.to_s, spec.licenses, spec.runtime_dependencies]

      home = File.join(dir, "home")
      out = IO.popen(["gem", "install", "--local", "--no-document", "--install-dir", home, gem], err: %i[child out], &:read)
      assert $?.success?, out
      installed = File.join(home, "gems", "rl-#{Rl::VERSION}")
      assert_equal File.binread(File.join(ROOT, "LICENSE")), File.binread(File.join(installed, "LICENSE"))
      assert_equal File.binread(File.join(ROOT, "functions/rl.lua")), File.binread(File.join(installed, "rl-#{Rl::VERSION}.lua"))
      script = 'require "rl"; print Rl.library_path, " ", $LOADED_FEATURES.grep(/rl\/client/).first'
      out = IO.popen({ "GEM_HOME" => home, "GEM_PATH" => home }, ["ruby", "-e", script], chdir: dir, &:read)
      library, client = out.split
      assert_equal File.join(installed, "rl-#{Rl::VERSION}.lua"), library
      assert client.start_with?(installed), "loaded #{client}, not the installed gem"
    end
  end
end
