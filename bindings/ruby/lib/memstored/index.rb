# frozen_string_literal: true

module Memstored
  # tkrzw-ruby's Index: a secondary index, an ordered set of (key, value)
  # pairs, a key having any number of values. The engine's
  # (bindings/ruby/src/index.rs): a tree file for a ".tkt" path, else in
  # memory, as Tkrzw's PolyIndex; its files are those the other bindings
  # write. The extension has add, remove, include?, count, file_path,
  # clear, rebuild, synchronize, open?, writable?, close.
  class Index
    # open(path, writable, **params) -> Status. Params are a database
    # name's (truncate, num_buckets, ...) and `encoding`, of the strings
    # returned.
    def open(path, writable, params = nil, **kwparams)
      all = (params || {}).merge(kwparams).transform_keys(&:to_s)
      encoding = all.delete("encoding")&.to_s
      all.delete("concurrent")
      status = open_native(path.to_s, writable ? true : false, all.map { |k, v| [k, v.to_s] })
      @encoding = encoding ? Encoding.find(encoding) : nil if status.ok?
      status
    end

    def destruct
      close if open?
      nil
    end

    # get_values(key, max = 0) -> the values of the key, in order (at most max; 0: all).
    def get_values(key, max = 0)
      get_values_native(key, max.to_i).each { |v| text(v) }
    end

    def to_i
      count
    end

    def make_iterator
      IndexIterator.new(self)
    end

    # Yields every key and value, in order.
    def each
      return enum_for(:each) unless block_given?

      iter = make_iterator
      begin
        iter.first
        while (pair = iter.get)
          yield pair[0], pair[1]
          iter.next
        end
      ensure
        iter.destruct
      end
      nil
    end

    def to_s
      open? ? "#{file_path}:#{count}" : "(unopened)"
    end

    def inspect
      "#<Memstored::Index:#{self}>"
    end

    # A string the extension returned, in the index's encoding.
    def text(bytes)
      @encoding ? bytes.force_encoding(@encoding) : bytes
    end
  end

  # An iterator over an Index's pairs, in order: first, last, next,
  # previous (the extension's), jump(key, value = ""), get -> [key, value] or nil.
  class IndexIterator
    # Keeps the index for the encoding of what get returns.
    def initialize(index)
      initialize_native(index)
      @index = index
    end

    # To the first pair not before (key, value).
    def jump(key, value = "")
      jump_native(key, value)
    end

    # The current pair, or nil.
    def get
      get_native&.map { |s| @index.text(s) }
    end

    def to_s
      pair = get
      pair ? "#{pair[0].dump}:#{pair[1].dump}" : "(unlocated)"
    rescue StatusException
      "(destructed)"
    end

    def inspect
      "#<Memstored::IndexIterator:#{self}>"
    end
  end
end
