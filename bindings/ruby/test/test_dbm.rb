# frozen_string_literal: true

require_relative "helper"

class TestDBM < Minitest::Test
  include DBMTest

  def test_open_close_and_reopen_keeps_records
    path = ::File.join(@dir, "casket.tkh")
    dbm = DBM.new
    refute dbm.open?
    assert_equal "#<Memstored::DBM:(not opened database)>", dbm.inspect
    assert dbm.open(path, true, truncate: true, num_buckets: 100).ok?
    assert dbm.open?
    assert_equal Status::PRECONDITION_ERROR, dbm.open(path, true).code
    dbm["k"] = "v"
    assert dbm.close.ok?
    refute dbm.open?
    # tkrzw-ruby's perf.rb passes the parameters as a Hash argument.
    assert dbm.open(path, false, { "num_buckets" => "100" }).ok?
    assert_equal "v", dbm["k"]
    refute dbm.writable?
    assert_equal Status::PRECONDITION_ERROR, dbm.set("k", "w").code
    assert_nil dbm.destruct
    refute dbm.open?
  end

  def test_open_failures_are_statuses
    assert_equal Status::INVALID_ARGUMENT_ERROR, DBM.new.open(::File.join(@dir, "x.tkh"), true, no_such_param: 1).code
    # A separator inside a value would smuggle in another parameter.
    smuggled = DBM.new.open(::File.join(@dir, "x.tkh"), true, num_buckets: "10,truncate=true")
    assert_equal Status::INVALID_ARGUMENT_ERROR, smuggled.code
    missing = DBM.new.open(::File.join(@dir, "no", "such", "dir.tkh"), true)
    refute missing.ok?
    refute_empty missing.message
  end

  def test_calls_on_a_closed_database_raise
    dbm = DBM.new
    e = assert_raises(StatusException) { dbm.get("k") }
    assert_equal Status::PRECONDITION_ERROR, e.status.code
    assert_raises(StatusException) { dbm.close }
    assert_raises(StatusException) { dbm.make_iterator }
  end

  def test_get_set_remove
    dbm = open_db
    assert dbm.set("k", "v").ok?
    assert_equal "v", dbm.get("k")
    assert_equal Encoding::ASCII_8BIT, dbm.get("k").encoding
    assert_equal Status::DUPLICATION_ERROR, dbm.set("k", "w", false).code
    assert_equal "v", dbm.get("k")
    assert dbm.set("k", "w", true).ok?
    status = Status.new
    assert_equal "w", dbm.get("k", status)
    assert status.ok?
    assert_nil dbm.get("absent", status)
    assert_equal Status::NOT_FOUND_ERROR, status.code
    assert dbm.include?("k")
    refute dbm.include?("absent")
    assert dbm.remove("k").ok?
    assert_equal Status::NOT_FOUND_ERROR, dbm.remove("k").code
  end

  def test_binary_and_non_string_keys
    dbm = open_db
    dbm.set("a\0b", "\xff\0\x01".b).or_die
    assert_equal "\xff\0\x01".b, dbm.get("a\0b")
    dbm.set(12, 3.5).or_die
    dbm.set(:sym, true).or_die
    assert_equal "3.5", dbm.get("12")
    assert_equal "true", dbm[:sym]
    dbm.set("", "").or_die
    assert_equal "", dbm.get("")
  end

  def test_encoding_parameter_tags_results
    dbm = open_db(encoding: "UTF-8")
    dbm["ключ"] = "значение"
    value = dbm["ключ"]
    assert_equal Encoding::UTF_8, value.encoding
    assert_equal "значение", value
    assert_equal ["ключ"], dbm.search("begin", "к")
  end

  def test_large_values_round_trip
    dbm = open_db
    big = "x" * (3 << 20)
    dbm.set("big", big).or_die
    dbm.append("big", "yz", "-").or_die
    assert_equal "#{big}-yz", dbm["big"]
    dbm.set_multi(a: big, b: "small").or_die
    assert_equal big.size, dbm["a"].size
  end

  def test_multi_operations
    dbm = open_db
    assert dbm.set_multi(a: "1", b: "2").ok?
    assert dbm.set_multi({ "c" => "3" }).ok?
    assert_equal Status::DUPLICATION_ERROR, dbm.set_multi(false, a: "x", d: "4").code
    assert_equal "1", dbm["a"]
    assert_equal "4", dbm["d"]
    assert_equal({ "a" => "1", "b" => "2" }, dbm.get_multi("a", "b", "zz"))
    assert_equal({ "c" => "3" }, dbm.get_multi(%w[c zz]))
    assert_equal({}, dbm.get_multi)
    assert_equal Status::NOT_FOUND_ERROR, dbm.remove_multi("a", "zz").code
    assert_nil dbm["a"]
    assert dbm.remove_multi(%w[b c]).ok?
    assert_equal 1, dbm.count
  end

  def test_set_and_get_and_remove_and_get
    dbm = open_db
    status, old = dbm.set_and_get("k", "1")
    assert status.ok?
    assert_nil old
    status, old = dbm.set_and_get("k", "2")
    assert status.ok?
    assert_equal "1", old
    status, old = dbm.set_and_get("k", "3", false)
    assert_equal Status::DUPLICATION_ERROR, status.code
    assert_equal "2", old
    assert_equal "2", dbm["k"]
    status, value = dbm.remove_and_get("k")
    assert status.ok?
    assert_equal "2", value
    status, value = dbm.remove_and_get("k")
    assert_equal Status::NOT_FOUND_ERROR, status.code
    assert_nil value
  end

  def test_append
    dbm = open_db
    dbm.append("k", "a").or_die
    dbm.append("k", "b", ",").or_die
    dbm.append("k", "c").or_die
    assert_equal "a,bc", dbm["k"]
  end

  def test_increment
    dbm = open_db
    assert_equal 105, dbm.increment("n", 5, 100)
    assert_equal 103, dbm.increment("n", -2)
    assert_equal 103, dbm.increment("n", DBM::INT64_MIN)
    assert_equal "103", dbm["n"]
    dbm["s"] = "not a number"
    status = Status.new
    assert_nil dbm.increment("s", 1, 0, status)
    refute status.ok?
    assert_equal 1, dbm.increment("fresh")
  end

  def test_compare_exchange
    dbm = open_db
    assert dbm.compare_exchange("k", nil, "1").ok?
    assert_equal Status::INFEASIBLE_ERROR, dbm.compare_exchange("k", nil, "2").code
    assert_equal Status::INFEASIBLE_ERROR, dbm.compare_exchange("k", "9", "2").code
    assert dbm.compare_exchange("k", "1", "2").ok?
    assert_equal "2", dbm["k"]
    assert dbm.compare_exchange("k", "2", nil).ok?
    assert_nil dbm["k"]
  end

  # Seed 004's transfer: Alice pays Bob 500 when both hold what we read.
  def test_compare_exchange_multi
    dbm = open_db
    dbm.set_multi(alice: "3000", bob: "1000").or_die
    assert dbm.compare_exchange_multi([%w[alice 3000], %w[bob 1000]], [%w[alice 2500], %w[bob 1500]]).ok?
    assert_equal Status::INFEASIBLE_ERROR,
                 dbm.compare_exchange_multi([%w[alice 3000]], [%w[alice 0]]).code
    assert_equal({ "alice" => "2500", "bob" => "1500" }, dbm.get_multi("alice", "bob"))
    assert dbm.compare_exchange_multi({ "carol" => nil, "bob" => "1500" }, { "bob" => nil, "carol" => "1" }).ok?
    assert_nil dbm["bob"]
    assert_equal "1", dbm["carol"]
  end

  def test_count_clear_to_i_to_s_inspect
    dbm = open_db("tkt")
    3.times { |i| dbm[i] = i }
    assert_equal 3, dbm.count
    assert_equal 3, dbm.to_i
    path = ::File.join(@dir, "casket.tkt")
    assert_equal "TreeDBM:#{path.inspect}:3", dbm.to_s
    assert_equal "#<Memstored::DBM:TreeDBM:#{path.inspect}:3>", dbm.inspect
    assert dbm.clear.ok?
    assert_equal 0, dbm.count
  end

  def test_inspect_details_writable_ordered
    hash = open_db("tkh")
    details = hash.inspect_details
    assert_equal "HashDBM", details["class"]
    assert_equal ::File.join(@dir, "casket.tkh"), details["path"]
    assert hash.writable?
    refute hash.ordered?
    assert open_db("tkt").ordered?
  end

  def test_synchronize_rebuild_should_be_rebuilt
    dbm = open_db
    1000.times { |i| dbm.set(i, "v" * 100) }
    1000.times { |i| dbm.set(i, "u" * 100) }
    1000.times { |i| dbm.set(i, "w" * 100) }
    assert dbm.synchronize(false).ok?
    assert dbm.should_be_rebuilt?
    assert dbm.synchronize(true, reducer: "none").ok?
    before = dbm.inspect_details["file_size"].to_i
    assert dbm.rebuild(sync_hard: true).ok?
    refute dbm.should_be_rebuilt?
    assert_operator dbm.inspect_details["file_size"].to_i, :<, before
    assert_equal "w" * 100, dbm[999]
  end

  def test_search
    dbm = open_db("tkt")
    %w[apple apricot banana cherry].each { |k| dbm[k] = "1" }
    assert_equal %w[apple apricot], dbm.search("begin", "ap").sort
    assert_equal %w[banana], dbm.search("contain", "nan")
    assert_equal %w[apricot], dbm.search("end", "cot")
    assert_equal %w[apple apricot banana], dbm.search("regex", "^[ab]").sort
    assert_equal 1, dbm.search("begin", "", 1).size
    assert_equal %w[banana cherry], dbm.search("upperex", "apricot")
    e = assert_raises(StatusException) { dbm.search("no-such-mode", "x") }
    assert_equal Status::INVALID_ARGUMENT_ERROR, e.status.code
  end

  def test_operators_and_each
    dbm = open_db("tkt")
    assert_equal "1", (dbm["a"] = "1")
    dbm["b"] = "2"
    assert_equal "1", dbm["a"]
    assert_nil dbm["zz"]
    assert_equal "1", dbm.delete("a")
    assert_nil dbm.delete("a")
    dbm["c"] = "3"
    seen = []
    assert_nil(dbm.each { |k, v| seen << [k, v] })
    assert_equal [%w[b 2], %w[c 3]], seen
    assert_equal [%w[b 2], %w[c 3]], dbm.each.to_a
  end
end
