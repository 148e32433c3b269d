# frozen_string_literal: true

module Memstored
  # tkrzw-ruby's record processors and the calls built like them: process,
  # process_multi, process_each, compare_exchange with ANY_DATA,
  # compare_exchange_and_get, rekey, pop_first, push_last, append_multi
  # (the last four over the engine's calls, bindings/ruby/src/tkrzw.rs).
  #
  # Blocks run with no lock of the database held (not the engine's
  # process_multi/process_each, which hold shard locks while their callback
  # runs: a Ruby block there that let another Ruby thread run, which then
  # waited for the same lock holding the GVL, would deadlock both): a block may take long,
  # release the GVL, or call the database itself without deadlocking the
  # other threads. Each change is then committed atomically by a
  # compare-and-exchange against the values the block saw; when another
  # thread changed one of those records meanwhile, the values are read
  # again and the block is called again. So a block may run more than once
  # for a call under contention (Tkrzw's runs once, under the record's lock).
  class DBM
    # Passed to compare_exchange and compare_exchange_multi: as expected,
    # "any value, the record must exist"; as desired, "keep the value".
    ANY_DATA = Object.new
    def ANY_DATA.inspect
      "Memstored::DBM::ANY_DATA"
    end
    ANY_DATA.freeze

    # compare_exchange(key, expected, desired) -> Status. expected nil: the
    # record must be absent; desired nil: remove it; either may be ANY_DATA.
    def compare_exchange(key, expected, desired)
      return compare_exchange_native(key, expected, desired) unless any?(expected) || any?(desired)

      compare_exchange_and_get(key, expected, desired)[0]
    end

    # As compare_exchange, atomically; returns [Status, the value before (nil: absent)].
    def compare_exchange_and_get(key, expected, desired)
      compare_exchange_and_get_native(key, expected, any?(expected), desired, any?(desired))
    end

    # Atomically: when every [key, value] of `expected` holds (nil: absent,
    # ANY_DATA: present), applies every [key, value] of `desired` (nil:
    # remove, ANY_DATA: keep); else INFEASIBLE_ERROR and nothing changes.
    # Arrays of pairs or Hashes.
    def compare_exchange_multi(expected, desired)
      expected = expected.to_a
      desired = desired.to_a
      return compare_exchange_multi_native(expected, desired) unless (expected + desired).any? { |_, v| any?(v) }

      loop do
        current = {}
        (expected + desired).each { |k, v| current[k] = get(k) if any?(v) && !current.key?(k) }
        if expected.any? { |k, v| any?(v) && current[k].nil? }
          return Status.new(Status::INFEASIBLE_ERROR, "a record does not exist")
        end

        resolve = ->(pairs) { pairs.map { |k, v| [k, any?(v) ? current[k] : v] } }
        status = compare_exchange_multi_native(resolve.call(expected), resolve.call(desired))
        return status unless status == Status::INFEASIBLE_ERROR
        # Only a record read for ANY_DATA that changed meanwhile is worth another try.
        return status unless expected.all? { |k, v| any?(v) || same?(v, get(k)) }
      end
    end

    # Calls the block with the key and its value (nil: absent); with
    # writable, the block's result is stored: nil leaves the record, false
    # removes it, anything else is stored as a string. -> Status.
    def process(key, writable)
      raise ArgumentError, "process needs a block" unless block_given?

      name = key_string(key)
      loop do
        current = get(key)
        result = guarded { yield(name, current) }
        return result if result.is_a?(Status)
        return Status.new if !writable || result.value.nil?

        desired = result.value == false ? nil : value_string(result.value)
        return Status.new if desired.nil? && current.nil?

        status = compare_exchange_native(key, current, desired)
        return status unless status == Status::INFEASIBLE_ERROR
      end
    end

    # Calls the block for each key in turn (a key given twice sees the first
    # call's result), then commits every change in one atomic step. -> Status.
    def process_multi(keys, writable)
      raise ArgumentError, "process_multi needs a block" unless block_given?

      names = keys.to_a.map { |k| key_string(k) }
      loop do
        seen = {}
        names.each { |k| seen[k] = get(k) unless seen.key?(k) }
        now = seen.dup
        names.each do |k|
          result = guarded { yield(k, now[k]) }
          return result if result.is_a?(Status)
          next if !writable || result.value.nil?

          now[k] = result.value == false ? nil : value_string(result.value)
        end
        changed = now.reject { |k, v| same?(v, seen[k]) }
        return Status.new if changed.empty?

        status = compare_exchange_multi_native(seen.to_a, changed.to_a)
        return status unless status == Status::INFEASIBLE_ERROR
      end
    end

    # Calls the block with (nil, nil), then with every record's key and value
    # (results as process's, with writable), then with (nil, nil). -> Status.
    def process_each(writable)
      raise ArgumentError, "process_each needs a block" unless block_given?

      iter = make_iterator
      begin
        return Status.new(Status::UNKNOWN_ERROR, "exception from the block code") if guarded { yield(nil, nil) }.is_a?(Status)

        status = iter.first
        return status unless status.ok?

        while (record = iter.get)
          result = guarded { yield(record[0], record[1]) }
          return result if result.is_a?(Status)

          status = each_result(iter, writable, result.value)
          return status unless status.ok?
        end
        guarded { yield(nil, nil) }.is_a?(Status) ? Status.new(Status::UNKNOWN_ERROR, "exception from the block code") : Status.new
      ensure
        iter.destruct
      end
    end

    # rekey(old_key, new_key, overwrite = true, copying = false) -> Status:
    # moves (or copies) a record to a new key, atomically. NOT_FOUND_ERROR
    # when old_key is absent; DUPLICATION_ERROR when new_key exists and not overwrite.
    def rekey(old_key, new_key, overwrite = true, copying = false)
      rekey_native(old_key, new_key, overwrite ? true : false, copying ? true : false)
    end

    # Removes the first record (in key order on ordered databases) and
    # returns [key, value]; nil when there is none (status NOT_FOUND_ERROR).
    # With retry_wait (seconds; Float::INFINITY: for ever), waits that long
    # for a push_last with notify when there is none (tkrzw's C++ PopFirst).
    def pop_first(status = nil, retry_wait = nil)
      result, key, value = pop_first_native(retry_wait.to_f)
      status&.set(result.code, result.message)
      key && [key, value]
    end

    # Stores the value under a key made of the time (wtime seconds, or now
    # when nil or negative) in units of 10 ns, 8 bytes big-endian, the next
    # free one when taken: Tkrzw's queue order with pop_first. With notify,
    # wakes the pop_first calls waiting. -> Status.
    def push_last(value, wtime = nil, notify = false)
      push_last_native(value, wtime.nil? ? -1.0 : wtime.to_f, notify ? true : false)
    end

    # append_multi(delim = "", records) appends every value of a Hash (or
    # keywords) to its record. -> Status, the first failure.
    def append_multi(delim = "", records = nil, **kwrecords)
      if delim.is_a?(Hash)
        records = delim
        delim = ""
      end
      status = Status.new
      (records || {}).merge(kwrecords).each { |k, v| status.join(append(k, v, delim)) }
      status
    end

    private

    def any?(value)
      ANY_DATA.equal?(value)
    end

    # Two values (strings or nil) hold the same bytes.
    def same?(left, right)
      return left.nil? && right.nil? if left.nil? || right.nil?

      value_string(left).b == value_string(right).b
    end

    # A key as the block sees it: a string in the database's encoding.
    def key_string(key)
      value_string(key).dup.force_encoding(@encoding || Encoding::ASCII_8BIT)
    end

    # Keys and values as tkrzw-ruby converts them.
    def value_string(value)
      return value if value.is_a?(String)

      value.respond_to?(:to_str) ? value.to_str : value.to_s
    end

    # The block's result; a failing Status when it raised (as Tkrzw's, which
    # reports the exception as UNKNOWN_ERROR).
    Result = Struct.new(:value)
    private_constant :Result

    def guarded
      Result.new(yield)
    rescue StandardError => e
      Status.new(Status::UNKNOWN_ERROR, "exception from the block code: #{e.class}: #{e.message}")
    end

    # Applies a process_each block's result at the iterator, which ends on
    # the next record (NOT_FOUND_ERROR past the last one is the normal end).
    def each_result(iter, writable, value)
      status = if writable && value == false
                 iter.remove
               else
                 changed = writable && !value.nil? ? iter.set(value_string(value)) : Status.new
                 changed.ok? ? iter.next : changed
               end
      status == Status::NOT_FOUND_ERROR ? Status.new : status
    end
  end
end
