# frozen_string_literal: true

require_relative "helper"

class TestUtility < Minitest::Test
  def test_constants
    assert_match(/\A\d+\.\d+\.\d+\z/, Memstored::Utility::VERSION)
    refute_empty Memstored::Utility::OS_NAME
    assert_operator Memstored::Utility::PAGE_SIZE, :>, 0
    assert_equal(-2**31, Memstored::Utility::INT32MIN)
    assert_equal 2**64 - 1, Memstored::Utility::UINT64MAX
    assert_equal(-2**63, Memstored::Utility::INT64MIN)
  end

  def test_memory_on_linux
    skip "only /proc says" unless Memstored::Utility::OS_NAME == "Linux"
    assert_operator Memstored::Utility.get_memory_capacity, :>, Memstored::Utility.get_memory_usage
    assert_operator Memstored::Utility.get_memory_usage, :>, 0
  end

  # Tkrzw's own numbers for "abc": programs may have stored them.
  def test_hashes_match_tkrzw
    u = Memstored::Utility
    assert_equal 3_042_090_208, u.primary_hash("abc", (1 << 32) - 1)
    assert_equal 16_973_900_370_012_003_622, u.primary_hash("abc")
    assert_equal 702_176_507, u.secondary_hash("abc", (1 << 32) - 1)
    assert_equal 1_765_794_342_254_572_867, u.secondary_hash("abc")
    assert_operator u.primary_hash("a longer key than eight bytes", 7), :<, 7
  end

  def test_edit_distance_and_serialization
    u = Memstored::Utility
    assert_equal 0, u.edit_distance_lev("", "")
    assert_equal 1, u.edit_distance_lev("ac", "abc")
    assert_equal 3, u.edit_distance_lev("あいう", "あう")
    assert_equal 1, u.edit_distance_lev("あいう", "あう", true)
    assert_equal "\xff\xff\xff\xff\xff\xfe\x1d\xc0".b, u.serialize_int(-123_456)
    assert_equal(-123_456, u.deserialize_int(u.serialize_int(-123_456)))
    assert_equal 8, u.serialize_float(-123.456).bytesize
    assert_equal(-123.456, u.deserialize_float(u.serialize_float(-123.456)))
  end
end
