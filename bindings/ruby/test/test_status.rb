# frozen_string_literal: true

require_relative "helper"

class TestStatus < Minitest::Test
  include Memstored

  # tkrzw's numbering and names (tkrzw_lib_common.h, the C API's header).
  TKRZW = %w[SUCCESS UNKNOWN_ERROR SYSTEM_ERROR NOT_IMPLEMENTED_ERROR PRECONDITION_ERROR
             INVALID_ARGUMENT_ERROR CANCELED_ERROR NOT_FOUND_ERROR PERMISSION_ERROR
             INFEASIBLE_ERROR DUPLICATION_ERROR BROKEN_DATA_ERROR NETWORK_ERROR
             APPLICATION_ERROR].freeze

  def test_codes_and_names_are_tkrzws
    TKRZW.each_with_index do |name, code|
      assert_equal code, Status.const_get(name), name
      assert_equal name, Status.code_name(code)
    end
    assert_equal "unknown", Status.code_name(99)
    assert_equal "unknown", Status.code_name(-1)
  end

  def test_defaults_to_success
    s = Status.new
    assert s.ok?
    assert_equal Status::SUCCESS, s.code
    assert_equal "", s.message
    assert_equal "SUCCESS", s.to_s
    assert_nil s.or_die
  end

  def test_to_s_inspect_to_i
    s = Status.new(Status::NOT_FOUND_ERROR, "no key")
    refute s.ok?
    assert_equal "NOT_FOUND_ERROR: no key", s.to_s
    assert_equal "#<Memstored::Status:NOT_FOUND_ERROR: no key>", s.inspect
    assert_equal 7, s.to_i
  end

  def test_equality_with_statuses_and_integers
    s = Status.new(Status::INFEASIBLE_ERROR, "a")
    assert_equal s, Status.new(Status::INFEASIBLE_ERROR, "b")
    assert s == Status::INFEASIBLE_ERROR
    assert s != Status::SUCCESS
    refute s == "INFEASIBLE_ERROR"
  end

  def test_set_and_join
    s = Status.new
    s.join(Status.new(Status::SYSTEM_ERROR, "first"))
    s.join(Status.new(Status::NOT_FOUND_ERROR, "second"))
    assert_equal Status::SYSTEM_ERROR, s.code
    assert_equal "first", s.message
    s.set(Status::DUPLICATION_ERROR, "dup")
    assert_equal "DUPLICATION_ERROR: dup", s.to_s
    s.set
    assert s.ok?
  end

  def test_or_die_raises_with_the_status
    s = Status.new(Status::BROKEN_DATA_ERROR, "crc")
    e = assert_raises(StatusException) { s.or_die }
    assert_same s, e.status
    assert_equal "BROKEN_DATA_ERROR: crc", e.message
    assert_equal "BROKEN_DATA_ERROR: crc", e.to_s
    assert_equal "#<Memstored::StatusException:BROKEN_DATA_ERROR: crc>", e.inspect
    assert_kind_of RuntimeError, e
  end
end
