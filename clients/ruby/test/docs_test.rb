# frozen_string_literal: true

require_relative "test_helper"
require "open3"

# docs/clients.md's Ruby section as a user reads it: each Ruby program runs
# (ruby, with this gem's lib/) against Valkey 9.1 with the module and a
# stopped clock, its output compared with the block the docs show after
# it; a config.ru is served by thin and sent five requests, the statuses
# (and Retry-After) compared the same way. Blocks marked docs-test: skip
# say which test runs them. The README's Ruby lines must be lines of the
# section's blocks, and no other Ruby block in README.md or docs/ may go
# unchecked.
class DocsTest < Minitest::Test
  include RlTest

  ROOT = Servers::ROOT
  CLIENTS = File.join(ROOT, "docs/clients.md")
  FENCE = /^(?:(<!--[^\n]*-->)\n)?```(\w*)\n(.*?)^```$/m.freeze
  LIB = File.expand_path("../lib", __dir__)

  Block = Struct.new(:line, :marker, :info, :code, :prints, keyword_init: true)

  def self.blocks(text, offset = 0)
    matches = []
    text.scan(FENCE) { matches << [Regexp.last_match, Regexp.last_match.begin(0)] }
    matches.each_with_index.map do |(m, at), i|
      following = matches[i + 1]&.first
      prints = following && following[1].to_s.include?("docs-test: prints") ? following[3] : nil
      Block.new(line: offset + text[0...at].count("\n") + (m[1] ? 2 : 1), marker: m[1].to_s, info: m[2],
                code: m[3], prints: prints)
    end
  end

  def self.section
    text = File.read(CLIENTS)
    start = text.index("## Ruby:") or raise "docs/clients.md has no Ruby section"
    stop = text.index("\n## ", start + 1) || text.size
    [text[start...stop], text[0...start].count("\n")]
  end

  RUBY = blocks(*section).select { |b| b.info == "ruby" }.freeze

  def test_the_section_has_its_programs
    assert_equal 2, RUBY.count { |b| !b.marker.include?("docs-test: skip:") }, "runnable Ruby blocks"
    RUBY.each { |b| assert b.marker.include?("docs-test: skip:") || b.prints, "docs/clients.md:#{b.line}: no prints block" }
  end

  RUBY.each do |block|
    next if block.marker.include?("docs-test: skip:")

    define_method("test_docs/clients.md:#{block.line}") do
      s = server(:valkey_module_stopped)
      code = block.code.gsub("redis://localhost:6379", s.url)
      got = code.start_with?("# config.ru") ? serve(code) : run_program(code)
      assert_equal block.prints, got, "docs/clients.md:#{block.line} printed"
    end
  end

  def run_program(code)
    out, status = Open3.capture2e("ruby", "-I", LIB, "-e", code, chdir: Dir.tmpdir)
    assert status.success?, out
    out
  end

  def serve(code)
    Dir.mktmpdir("rl-docs-") do |dir|
      File.write(File.join(dir, "config.ru"), code)
      port = Servers.free_port
      log = File.join(dir, "thin.log")
      pid = Process.spawn({ "RUBYLIB" => LIB }, "thin", "start", "-R", "config.ru", "-a", "127.0.0.1", "-p", port.to_s,
                          chdir: dir, %i[out err] => log)
      begin
        wait_for(port, pid, log)
        Array.new(5) do
          r = Net::HTTP.get_response(URI("http://127.0.0.1:#{port}/"))
          r.code == "429" ? "#{r.code} retry-after: #{r["retry-after"]}\n" : "#{r.code}\n"
        end.join
      ensure
        Process.kill("KILL", pid)
        Process.wait(pid)
      end
    end
  end

  def wait_for(port, pid, log)
    deadline = Time.now + 30
    loop do
      TCPSocket.new("127.0.0.1", port).close
      return
    rescue SystemCallError
      flunk "thin exited:\n#{File.read(log)}" if Process.waitpid(pid, Process::WNOHANG)
      flunk "thin never listened:\n#{File.read(log)}" if Time.now > deadline
      sleep 0.1
    end
  end

  # The repository's README (its From your framework) and the gem's own
  # README show lines, not programs: each must be a line of a block above.
  {
    "README.md" => ->(text) { text[/^## From your framework\n.*?(?=^## )/m] },
    "clients/ruby/README.md" => ->(text) { text }
  }.each do |file, part|
    define_method("test_#{file}'s Ruby lines are lines of docs/clients.md's section") do
      text = part.call(File.read(File.join(ROOT, file))) or flunk "#{file} has no From your framework"
      lines = DocsTest.blocks(text).select { |b| b.info == "ruby" }.flat_map { |b| b.code.lines.map(&:strip) }
      refute_empty lines, "#{file} has no Ruby block"
      section = RUBY.flat_map { |b| b.code.lines.map(&:strip) }
      lines.reject(&:empty?).each { |l| assert_includes section, l, "#{file}'s Ruby line is not in docs/clients.md" }
    end
  end

  def test_no_other_ruby_block_goes_unchecked
    files = [File.join(ROOT, "README.md"), *Dir[File.join(ROOT, "docs/*.md")]]
    elsewhere = files.flat_map do |f|
      text = File.read(f)
      text = text.sub(DocsTest.section.first, "") if f == CLIENTS
      text = text.sub(/^## From your framework\n.*?(?=^## )/m, "") if f.end_with?("README.md")
      DocsTest.blocks(text).select { |b| b.info == "ruby" }.map { |b| "#{f}:#{b.line}" }
    end
    assert_empty elsewhere, "Ruby blocks no test runs"
  end
end
