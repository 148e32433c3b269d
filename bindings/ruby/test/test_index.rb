# frozen_string_literal: true

require_relative "helper"

class TestIndex < Minitest::Test
  include DBMTest

  def open_index(path = ::File.join(@dir, "index.tkt"))
    index = Memstored::Index.new
    index.open(path, true, truncate: true).or_die
    index
  end

  def test_pairs_in_order_with_binary_keys
    index = open_index
    [%w[b 2], %w[a 9], %w[a 1], ["a\0", "x"], %w[ab 0]].each { |k, v| assert index.add(k, v).ok? }
    assert index.include?("a", "1")
    refute index.include?("a", "2")
    assert_equal %w[1 9], index.get_values("a")
    assert_equal %w[1], index.get_values("a", 1)
    assert_equal %w[x], index.get_values("a\0")
    assert_empty index.get_values("zz")
    assert_equal [%w[a 1], %w[a 9], ["a\0", "x"], %w[ab 0], %w[b 2]], index.each.to_a
    assert_equal Status::NOT_FOUND_ERROR, index.remove("a", "5").code
    assert index.remove("a", "9").ok?
    assert_equal 4, index.count
    assert_equal ::File.join(@dir, "index.tkt"), index.file_path
  end

  def test_iterator
    index = open_index("")
    %w[first second third].each_with_index { |k, i| index.add(k, (i + 1).to_s * (i + 1)) }
    iter = index.make_iterator
    assert_equal "#<Memstored::IndexIterator:(unlocated)>", iter.inspect
    iter.first
    assert_equal %w[first 1], iter.get
    assert_includes iter.to_s, "first"
    iter.last
    assert_equal %w[third 333], iter.get
    iter.previous
    assert_equal %w[second 22], iter.get
    iter.jump("second")
    assert_equal %w[second 22], iter.get
    iter.jump("second", "3")
    assert_equal %w[third 333], iter.get
    iter.next
    assert_nil iter.get
    iter.destruct
    assert_raises(StatusException) { iter.first }
  end

  def test_lifecycle
    index = Memstored::Index.new
    refute index.open?
    assert_raises(StatusException) { index.count }
    index = open_index
    assert index.writable?
    index.add("k", "v").or_die
    assert index.synchronize(false).ok?
    assert index.rebuild.ok?
    assert index.clear.ok?
    assert_equal 0, index.to_i
    assert index.close.ok?
    refute index.open?
    assert_includes index.inspect, "Memstored::Index"
    # As Tkrzw's PolyIndex: a path not ending in .tkt is an index in memory.
    memory = Memstored::Index.new
    assert memory.open(::File.join(@dir, "x.tkh"), true).ok?
    assert_equal "", memory.file_path
    refute ::File.exist?(::File.join(@dir, "x.tkh"))
    assert_equal Status::INVALID_ARGUMENT_ERROR, Memstored::Index.new.open("", true, num_buckets: "1,x=y").code
  end
end
