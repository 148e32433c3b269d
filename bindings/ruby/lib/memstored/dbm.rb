# frozen_string_literal: true

module Memstored
  # A database, with tkrzw-ruby's DBM API: make one with DBM.new, then
  # `open(path, writable, **params)`. One open DBM may be used by many
  # threads at once (every method but open and close). Tiny calls keep the
  # GVL; long ones (open, close, synchronize, rebuild, clear, search, and
  # stores of values of 1 MiB or more) release it.
  #
  # The methods that touch records are in the extension (bindings/ruby/src/dbm.rs):
  # get, set, remove, append, compare_exchange, increment, set_and_get,
  # remove_and_get, count, clear, should_be_rebuilt?, inspect_details,
  # writable?, ordered?, search, close, open?. Keys and values are byte
  # strings; other objects are converted as tkrzw-ruby converts them.
  # Results are ASCII-8BIT strings unless `open` was given an `encoding`.
  class DBM
    # Open parameters the binding consumes instead of passing on:
    # `concurrent` is tkrzw-ruby's switch to release the GVL on every call
    # (this binding decides per call, so it has no effect); `encoding` names
    # the encoding of returned strings.
    BINDING_PARAMS = %w[concurrent encoding].freeze

    # Smallest int64: as `inc` of increment, reads the number without changing it.
    INT64_MIN = -(2**63)

    # Opens a database. The path picks the engine ("casket.tkh" hash file,
    # "casket.tkt" ordered file, "*" in-memory hash, "+" in-memory ordered);
    # params become the name's parameters (`num_buckets: 1000`,
    # `truncate: true`, ...). Also takes the params as a Hash argument, as
    # tkrzw-ruby's perf.rb passes them. Returns a Status.
    def open(path, writable, params = nil, **kwparams)
      all = (params || {}).merge(kwparams).transform_keys(&:to_s)
      encoding = all["encoding"]&.to_s
      BINDING_PARAMS.each { |name| all.delete(name) }
      # The extension joins them to the path, refusing a , # or = in one.
      status = open_native(path.to_s, writable ? true : false, all.map { |k, v| [k, v.to_s] }, encoding)
      # The encoding of the keys process's blocks see (lib/memstored/dbm_process.rb).
      @encoding = encoding ? Encoding.find(encoding) : nil if status.ok?
      status
    end

    # Releases the database, closing it if open.
    def destruct
      close if open?
      nil
    end

    def include?(key)
      !get(key).nil?
    end

    # A Hash of the records of the keys that exist (given as arguments or one array).
    def get_multi(*keys)
      get_multi_native(keys.flatten(1))
    end

    # Stores every record of a Hash (given as keywords or one Hash); with
    # overwrite false, existing records are kept and DUPLICATION_ERROR returned.
    def set_multi(overwrite = true, records = nil, **kwrecords)
      if overwrite.is_a?(Hash)
        records = overwrite
        overwrite = true
      end
      set_multi_native((records || {}).merge(kwrecords).to_a, overwrite ? true : false)
    end

    # Removes every key (arguments or one array); NOT_FOUND_ERROR when some were absent.
    def remove_multi(*keys)
      remove_multi_native(keys.flatten(1))
    end


    # Compacts the files while other threads keep using the database.
    # Params are accepted for tkrzw's signature; the files keep the
    # settings they were opened with.
    def rebuild(**_params)
      rebuild_native
    end

    # Writes buffered data to the OS; with hard, to the device. Params as rebuild's.
    def synchronize(hard, **_params)
      synchronize_native(hard ? true : false)
    end

    def make_iterator
      Iterator.new(self)
    end

    # The number of records.
    def to_i
      count
    end

    # "class:path:count", as tkrzw-ruby's.
    def to_s
      details = inspect_details
      "#{details['class']}:#{details['path'].inspect}:#{count}"
    end

    def inspect
      return "#<Memstored::DBM:(not opened database)>" unless open?

      "#<Memstored::DBM:#{self}>"
    end

    # The value of the key, or nil.
    alias [] get

    # Stores the record (overwriting); returns the value.
    def []=(key, value)
      set(key, value).or_die
      value
    end

    # Removes the record; returns its value, or nil when there was none.
    def delete(key)
      remove_and_get(key)[1]
    end

    # Yields every key and value (in key order on ordered databases); an
    # Enumerator without a block.
    def each
      return enum_for(:each) unless block_given?

      iter = make_iterator
      begin
        iter.first.or_die
        while (record = iter.step)
          yield record[0], record[1]
        end
      ensure
        iter.destruct
      end
      nil
    end
  end
end
