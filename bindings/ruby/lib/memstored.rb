# frozen_string_literal: true

# memstored's storage library for Ruby, with tkrzw-ruby's API: a program
# written for tkrzw-ruby switches by requiring "memstored" and naming
# Memstored instead of Tkrzw. The classes are a Rust extension
# (bindings/ruby/src, built by `cargo build -p memstored-ruby`); this file
# finds and loads it, and adds the parts written in Ruby.
require_relative "memstored/status"

module Memstored
  # Where the extension is looked for: $MEMSTORED_RUBY_EXT (a file), else
  # the newer of this checkout's release and debug builds
  # ($CARGO_TARGET_DIR or target/).
  def self.extension_path
    explicit = ENV["MEMSTORED_RUBY_EXT"]
    return ::File.expand_path(explicit) if explicit && !explicit.empty?

    root = ::File.expand_path("../../..", __dir__)
    target = ::File.expand_path(ENV["CARGO_TARGET_DIR"].to_s.empty? ? "target" : ENV["CARGO_TARGET_DIR"], root)
    built = %w[release debug].map { |profile| ::File.join(target, profile, "libmemstored_ruby.so") }
                             .select { |path| ::File.exist?(path) }
    raise LoadError, "memstored: no libmemstored_ruby.so in #{target}; run `cargo build --release -p memstored-ruby`" if built.empty?

    built.max_by { |path| ::File.mtime(path) }
  end
end

require Memstored.extension_path
require_relative "memstored/dbm"
require_relative "memstored/dbm_process"
require_relative "memstored/dbm_files"
require_relative "memstored/iterator"
require_relative "memstored/utility"
require_relative "memstored/file"
require_relative "memstored/index"
require_relative "memstored/async"
