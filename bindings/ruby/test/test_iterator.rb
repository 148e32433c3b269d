# frozen_string_literal: true

require_relative "helper"

class TestIterator < Minitest::Test
  include DBMTest

  def ordered
    dbm = open_db("tkt")
    %w[a b c d].each_with_index { |k, i| dbm[k] = i }
    dbm
  end

  def test_walks_forward_and_back
    iter = ordered.make_iterator
    assert_equal "(unlocated)", iter.to_s
    status = Status.new
    assert_nil iter.get(status)
    assert_equal Status::NOT_FOUND_ERROR, status.code
    assert iter.first.ok?
    assert_equal %w[a 0], iter.get
    assert_equal "a", iter.get_key
    assert_equal "0", iter.get_value
    assert_equal '"a"', iter.to_s
    assert_equal '#<Memstored::Iterator:"a">', iter.inspect
    assert iter.next.ok?
    assert_equal "b", iter.get_key
    assert iter.previous.ok?
    assert_equal "a", iter.get_key
    assert iter.last.ok?
    assert_equal %w[d 3], iter.get
    assert iter.next.ok?
    assert_nil iter.get_key(status)
    assert_equal Status::NOT_FOUND_ERROR, status.code
    assert_nil iter.get_value
    assert_equal Status::NOT_FOUND_ERROR, iter.next.code
  end

  def test_jumps
    iter = ordered.make_iterator
    assert iter.jump("bb").ok?
    assert_equal "c", iter.get_key
    assert iter.jump_lower("c").ok?
    assert_equal "b", iter.get_key
    assert iter.jump_lower("c", true).ok?
    assert_equal "c", iter.get_key
    assert iter.jump_upper("b").ok?
    assert_equal "c", iter.get_key
    assert iter.jump_upper("b", true).ok?
    assert_equal "b", iter.get_key
  end

  def test_step_set_remove
    dbm = ordered
    iter = Iterator.new(dbm)
    iter.first.or_die
    status = Status.new
    assert_equal %w[a 0], iter.step(status)
    assert status.ok?
    assert iter.set("B").ok?
    assert_equal "B", dbm["b"]
    assert iter.remove.ok?
    assert_nil dbm["b"]
    assert_equal "c", iter.get_key
    assert_equal %w[c 2], iter.step
    assert_equal %w[d 3], iter.step
    assert_nil iter.step(status)
    assert_equal Status::NOT_FOUND_ERROR, status.code
  end

  def test_hash_database
    dbm = open_db("tkh")
    %w[x y z].each { |k| dbm[k] = k.upcase }
    iter = dbm.make_iterator
    assert_equal Status::NOT_IMPLEMENTED_ERROR, iter.last.code
    assert_equal Status::NOT_FOUND_ERROR, iter.jump("absent").code
    assert iter.jump("y").ok?
    assert_equal %w[y Y], iter.get
    iter.first.or_die
    seen = []
    while (record = iter.step)
      seen << record
    end
    assert_equal [%w[x X], %w[y Y], %w[z Z]], seen.sort
  end

  # As Tkrzw's: close releases the files (the same process reopens them
  # while the iterator lives) and the iterator then answers PRECONDITION_ERROR.
  def test_close_invalidates_live_iterators
    dbm = ordered
    iter = dbm.make_iterator
    iter.first.or_die
    dbm.close.or_die
    assert_equal Status::PRECONDITION_ERROR, iter.first.code
    assert_equal Status::PRECONDITION_ERROR, iter.next.code
    status = Status.new
    assert_nil iter.get(status)
    assert_equal Status::PRECONDITION_ERROR, status.code
    assert_nil iter.step
    again = DBM.new
    assert again.open(::File.join(@dir, "casket.tkt"), true).ok?
    assert_equal "0", again["a"]
    assert_nil iter.destruct
    e = assert_raises(StatusException) { iter.first }
    assert_equal Status::PRECONDITION_ERROR, e.status.code
    assert_nil iter.destruct
  end
end
