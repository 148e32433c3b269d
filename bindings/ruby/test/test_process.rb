# frozen_string_literal: true

require_relative "helper"

# process, process_multi, process_each, ANY_DATA, compare_exchange_and_get,
# rekey, pop_first/push_last, append_multi: tkrzw-ruby's semantics.
class TestProcess < Minitest::Test
  include DBMTest

  def test_process_results_keep_remove_or_store
    dbm = open_db
    assert dbm.process("k", true) { |_, _| nil }.ok?
    assert_nil dbm["k"]
    assert dbm.process("k", true) { |_, _| "v" }.ok?
    seen = nil
    assert dbm.process("k", false) { |k, v| seen = [k, v] and "ignored" }.ok?
    assert_equal %w[k v], seen
    assert_equal "v", dbm["k"]
    assert dbm.process(7, true) { |k, _| k * 2 }.ok?
    assert_equal "77", dbm["7"]
    assert dbm.process("k", true) { |_, _| false }.ok?
    assert_nil dbm["k"]
    assert dbm.process("n", true) { |_, _| 12 }.ok?
    assert_equal "12", dbm["n"]
  end

  def test_process_block_may_call_the_database
    dbm = open_db
    dbm["other"] = "x"
    assert dbm.process("k", true) { |_, _| dbm["other"] + "y" }.ok?
    assert_equal "xy", dbm["k"]
  end

  def test_process_block_exception_is_unknown_error
    dbm = open_db
    status = dbm.process("k", true) { |_, _| raise "boom" }
    assert_equal Status::UNKNOWN_ERROR, status.code
    assert_includes status.message, "boom"
    assert_nil dbm["k"]
  end

  def test_process_multi_sees_earlier_results_and_commits_at_once
    dbm = open_db
    dbm["one"] = "1"
    calls = []
    status = dbm.process_multi(%w[one two two], true) do |k, v|
      calls << [k, v]
      k == "one" ? false : "#{v}2"
    end
    assert status.ok?
    assert_equal [%w[one 1], ["two", nil], %w[two 2]], calls
    assert_nil dbm["one"]
    assert_equal "22", dbm["two"]
  end

  def test_process_each_frames_records_with_nils
    dbm = open_db("tkt")
    (1..4).each { |i| dbm[i] = i * i }
    keys = []
    assert dbm.process_each(false) { |k, _| keys << k and nil }.ok?
    assert_equal [nil, "1", "2", "3", "4", nil], keys
    assert dbm.process_each(true) { |k, v| k && (v.to_i.even? ? false : "odd") }.ok?
    assert_equal({ "1" => "odd", "3" => "odd" }, dbm.each.to_h)
  end

  def test_any_data_and_compare_exchange_and_get
    dbm = open_db
    assert_equal Status::INFEASIBLE_ERROR, dbm.compare_exchange("x", DBM::ANY_DATA, "a").code
    assert dbm.compare_exchange("x", nil, "a").ok?
    assert dbm.compare_exchange("x", DBM::ANY_DATA, DBM::ANY_DATA).ok?
    assert_equal "a", dbm["x"]
    status, old = dbm.compare_exchange_and_get("x", DBM::ANY_DATA, "b")
    assert status.ok?
    assert_equal "a", old
    status, old = dbm.compare_exchange_and_get("x", "zzz", "c")
    assert_equal Status::INFEASIBLE_ERROR, status.code
    assert_equal "b", old
    assert dbm.compare_exchange_multi([["x", DBM::ANY_DATA], ["y", nil]], [["x", nil], ["y", DBM::ANY_DATA]]).ok?
    assert_nil dbm["x"]
    assert_nil dbm["y"]
    assert_equal Status::INFEASIBLE_ERROR, dbm.compare_exchange_multi([["x", DBM::ANY_DATA]], [["x", "1"]]).code
  end

  def test_rekey
    dbm = open_db
    dbm["a"] = "1"
    dbm["b"] = "2"
    assert_equal Status::DUPLICATION_ERROR, dbm.rekey("a", "b", false).code
    assert dbm.rekey("a", "b").ok?
    assert_nil dbm["a"]
    assert_equal "1", dbm["b"]
    assert dbm.rekey("b", "c", true, true).ok?
    assert_equal %w[1 1], [dbm["b"], dbm["c"]]
    assert_equal Status::NOT_FOUND_ERROR, dbm.rekey("zz", "c").code
  end

  def test_push_last_and_pop_first_are_a_queue
    dbm = open_db("tkt")
    assert dbm.push_last("first", 0).ok?
    assert dbm.push_last("second", 0).ok?
    assert dbm.push_last("later").ok?
    status = Status.new
    assert_equal ["\0" * 8, "first"], dbm.pop_first(status)
    assert status.ok?
    assert_equal ["#{"\0" * 7}\x01".b, "second"], dbm.pop_first
    assert_equal "later", dbm.pop_first[1]
    assert_nil dbm.pop_first(status)
    assert_equal Status::NOT_FOUND_ERROR, status.code
  end

  def test_pop_first_waits_for_a_notified_push
    dbm = open_db("tkt")
    status = Status.new
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    assert_nil dbm.pop_first(status, 0.2)
    assert_equal Status::NOT_FOUND_ERROR, status.code
    assert_operator Process.clock_gettime(Process::CLOCK_MONOTONIC) - started, :>=, 0.19
    # Whether the push comes before or during the wait, the pop gets it.
    pusher = Thread.new { dbm.push_last("late", nil, true) }
    assert_equal "late", dbm.pop_first(status, 30)[1]
    assert status.ok?
    pusher.join
  end

  def test_compare_exchange_and_get_reports_the_value_on_failure
    dbm = open_db
    status, old = dbm.compare_exchange_and_get("k", nil, "v")
    assert status.ok?
    assert_nil old
    status, old = dbm.compare_exchange_and_get("k", nil, "w")
    assert_equal Status::INFEASIBLE_ERROR, status.code
    assert_equal "v", old
    status, old = dbm.compare_exchange_and_get("k", DBM::ANY_DATA, nil)
    assert status.ok?
    assert_equal "v", old
    assert_nil dbm["k"]
  end

  def test_append_multi
    dbm = open_db
    dbm.set_multi(one: "a", two: "b").or_die
    assert dbm.append_multi(":", one: "1", three: "3").ok?
    assert_equal({ "one" => "a:1", "three" => "3" }, dbm.get_multi("one", "three"))
  end
end
