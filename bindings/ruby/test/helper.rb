# frozen_string_literal: true

# Shared setup of the binding's tests: load the binding from this checkout
# (libmemstored is found through $MEMSTORED_LIB or the checkout's target
# directory) and give each test a fresh directory.
$LOAD_PATH.unshift(File.expand_path("../lib", __dir__))
require "minitest/autorun"
require "tmpdir"
require "memstored"

module DBMTest
  include Memstored

  def setup
    @dir = Dir.mktmpdir("memstored-ruby")
  end

  def teardown
    FileUtils.remove_entry(@dir)
  end

  # A database opened writable on a fresh file of the given extension.
  def open_db(ext = "tkh", **params)
    dbm = DBM.new
    dbm.open(::File.join(@dir, "casket.#{ext}"), true, truncate: true, **params).or_die
    dbm
  end
end
