# frozen_string_literal: true

module Memstored
  # An iterator over a database's records, with tkrzw-ruby's Iterator API:
  # first, last, jump, jump_lower, jump_upper, next, previous, get,
  # get_key, get_value, set, remove, step, destruct (the extension,
  # bindings/ruby/src/iter.rs). Made by DBM#make_iterator or
  # Iterator.new(dbm); it is on no record until first, last or a jump, and
  # answers PRECONDITION_ERROR once its DBM is closed.
  class Iterator
    # The current key, escaped; "(unlocated)" when on no record.
    def to_s
      key = get_key
      key.nil? ? "(unlocated)" : key.dump
    rescue StatusException
      "(destructed)"
    end

    def inspect
      "#<Memstored::Iterator:#{self}>"
    end
  end
end
