# frozen_string_literal: true

require_relative "test_helper"

# Which edition a client calls: found by its first call's own command,
# found again when the server says the one it used is gone, and an error
# saying how to load rl when there is neither.
class EditionTest < Minitest::Test
  include RlTest

  SLIDE = ->(c, key = "rl:e") { c.slide(key, limit: 1, window_ms: 60_000) }

  def own_server(edition, **options)
    s = Servers::Server.new(:valkey9, edition, **options)
    @own = s
  rescue Servers::Missing => e
    flunk e.message
  end

  def teardown
    @own&.stop
    super
  end

  def test_the_first_call_finds_the_library_without_asking_first
    s = server(:valkey_library)
    c = Rl::Client.new(s.redis)
    assert_equal [true, false], Array.new(2) { SLIDE.call(c).allowed? }
    assert_equal :library, c.edition
    # RL.ALL and RL.PEEK too, each on a fresh client.
    refute Rl::Client.new(s.redis).all(["rl:e", Rl::Slide.new(limit: 1, window_ms: 60_000)]).allowed?
    refute Rl::Client.new(s.redis).peek("rl:e", Rl::Slide.new(limit: 1, window_ms: 60_000)).allowed?
  end

  def test_edition_asks_before_any_call
    assert_equal :module, Rl::Client.new(server(:redis7_module).redis).edition
    assert_equal :library, Rl::Client.new(server(:redis7_library).redis).edition
    assert_equal :library, Rl::Client.new(server(:valkey_library).redis, edition: :library).edition
  end

  def test_found_again_when_the_module_is_unloaded_and_when_the_library_is_flushed
    s = own_server(:module, extra: ["--enable-module-command", "yes"])
    c = Rl::Client.new(s.redis)
    assert SLIDE.call(c, "rl:a").allowed?
    assert_equal :module, c.edition
    s.load_library
    s.admin.call("module", "unload", "rl")
    refute SLIDE.call(c, "rl:a").allowed?, "the same key, now through the library"
    assert_equal :library, c.edition
    s.admin.call("module", "load", Servers.module_path)
    s.admin.call("function", "flush")
    refute SLIDE.call(c, "rl:a").allowed?, "the same key, through the module again"
    assert_equal :module, c.edition
  end

  def test_neither_edition_is_an_error_saying_how_to_load_one_or_the_client_loads_the_library
    s = own_server(:none)
    c = Rl::Client.new(s.redis)
    e = assert_raises(Rl::NotLoadedError) { SLIDE.call(c) }
    assert_match(/loadmodule .* FUNCTION LOAD REPLACE < rl-#{Rl::VERSION}\.lua/, e.message)
    assert_raises(Rl::NotLoadedError) { c.edition }
    loader = Rl::Client.new(s.redis, load_functions: true)
    assert SLIDE.call(loader).allowed?
    assert_equal :library, loader.edition
    assert_equal Rl::VERSION, s.admin.call("fcall_ro", "rl_version", 0)
    refute SLIDE.call(c).allowed?, "the first client, asked again, finds the loaded library"
  end

  def test_the_library_it_ships_is_the_checkouts
    assert_equal File.read(File.join(Servers::ROOT, "functions/rl.lua")), Rl.library_source
  end

  def test_a_bad_edition_is_an_argument_error
    e = assert_raises(ArgumentError) { Rl::Client.new(Redis.new, edition: :lua) }
    assert_equal "rl: edition must be :module or :library, not :lua", e.message
  end
end
