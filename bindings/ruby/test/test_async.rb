# frozen_string_literal: true

require_relative "helper"

class TestAsync < Minitest::Test
  include DBMTest

  def test_calls_return_futures
    dbm = open_db
    async = Memstored::AsyncDBM.new(dbm, 2)
    future = async.set("one", "hop")
    assert_includes future.inspect, "Memstored::Future"
    assert future.wait
    assert future.get.ok?
    assert_equal Status::DUPLICATION_ERROR, async.set("one", "x", false).get.code
    assert_equal %w[hop], async.get("one").get.drop(1)
    assert_equal [Status::NOT_FOUND_ERROR, ""], async.get("none").get.then { |s, v| [s.code, v] }
    assert async.append_multi(":", one: "step").get.ok?
    status, found = async.get_multi("one", "two").get
    assert_equal Status::NOT_FOUND_ERROR, status.code
    assert_equal({ "one" => "hop:step" }, found)
    assert_equal 15, async.increment("n", 5, 10).get[1]
    assert async.compare_exchange("n", DBM::ANY_DATA, nil).get.ok?
    assert async.rekey("one", "uno").get.ok?
    assert_equal [Status::SUCCESS, "uno", "hop:step"], async.pop_first.get.then { |s, k, v| [s.code, k, v] }
    assert_equal ["", ""], async.pop_first.get.drop(1)
    assert async.push_last("q", 0).get.ok?
    assert_equal ["\0" * 8, "q"], async.pop_first.get.drop(1)
    status, keys = async.search("nosuchmode", "x").get
    assert_equal Status::INVALID_ARGUMENT_ERROR, status.code
    assert_empty keys
    async.destruct
    assert_raises(StatusException) { async.get("one") }
  end

  def test_wait_with_timeout_and_failures_as_statuses
    dbm = open_db
    async = Memstored::AsyncDBM.new(dbm, 1)
    gate = Queue.new
    blocked = async.send(:run) { gate.pop }
    refute blocked.wait(0.01)
    gate.push(Status.new)
    assert blocked.wait(10)
    dbm.close.or_die
    assert_equal Status::PRECONDITION_ERROR, async.set("k", "v").get.code
  ensure
    async&.destruct
  end
end
