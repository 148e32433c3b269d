# frozen_string_literal: true

module Memstored
  # tkrzw-ruby's Index: a secondary index, an ordered set of (key, value)
  # pairs, a key having any number of values. Kept in an ordered DBM (a
  # file for a path, in memory for ""), each pair as one record whose key
  # sorts as the pair does: the key with every NUL escaped as NUL 0xFF,
  # a NUL NUL terminator, then the value.
  class Index
    # The record key of a pair.
    def self.encode(key, value)
      "#{key.to_s.b.gsub("\0", "\0\xff".b)}\0\0".b + value.to_s.b
    end

    # A pair from its record key; nil for a key not made by encode.
    def self.decode(record_key)
      key = "".b
      pos = 0
      while (at = record_key.index("\0", pos))
        key << record_key.byteslice(pos, at - pos)
        case record_key.getbyte(at + 1)
        when 0xff then key << "\0"
        when 0 then return [key, record_key.byteslice(at + 2, record_key.bytesize)]
        else return nil
        end
        pos = at + 2
      end
      nil
    end

    def initialize
      @dbm = nil
    end

    # open(path, writable, **params) -> Status: "" for an index in memory,
    # else a file (an ordered database: "casket.tkt"). Params are the
    # DBM's (truncate, num_buckets, encoding, ...).
    def open(path, writable, params = nil, **kwparams)
      return Status.new(Status::PRECONDITION_ERROR, "opened index") if @dbm

      all = (params || {}).merge(kwparams).transform_keys(&:to_s)
      @encoding = all["encoding"] ? Encoding.find(all["encoding"].to_s) : nil
      all.delete("encoding")
      dbm = DBM.new
      status = dbm.open(path.to_s.empty? ? "+" : path.to_s, writable, all)
      return status unless status.ok?
      return Status.new(Status::INVALID_ARGUMENT_ERROR, "the index needs an ordered database") unless dbm.ordered?

      @dbm = dbm
      @path = path.to_s
      status
    end

    def close
      dbm = opened
      @dbm = nil
      dbm.close
    end

    def destruct
      close if @dbm
      nil
    end

    # True when the pair is in the index.
    def include?(key, value)
      opened.include?(Index.encode(key, value))
    end

    # get_values(key, max = 0) -> the values of the key, in order (at most max; 0: all).
    def get_values(key, max = 0)
      prefix = Index.encode(key, "")
      values = []
      iter = opened.make_iterator
      begin
        iter.jump(prefix)
        while (record_key = iter.get_key)
          break unless record_key.b.start_with?(prefix)

          values << text(record_key.b.byteslice(prefix.bytesize, record_key.bytesize))
          break if max.to_i.positive? && values.size >= max.to_i

          iter.next
        end
      ensure
        iter.destruct
      end
      values
    end

    # add(key, value) -> Status.
    def add(key, value)
      opened.set(Index.encode(key, value), "")
    end

    # remove(key, value) -> Status; NOT_FOUND_ERROR when the pair is absent.
    def remove(key, value)
      opened.remove(Index.encode(key, value))
    end

    # The number of pairs.
    def count
      opened.count
    end

    def to_i
      count
    end

    # The path the index was opened with ("" in memory).
    def file_path
      opened
      @path
    end

    def clear
      opened.clear
    end

    def rebuild
      opened.rebuild
    end

    def synchronize(hard)
      opened.synchronize(hard)
    end

    def open?
      !@dbm.nil?
    end

    def writable?
      opened.writable?
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
      @dbm ? "#{@path}:#{count}" : "(unopened)"
    end

    def inspect
      "#<Memstored::Index:#{self}>"
    end

    # The DBM behind (for IndexIterator); raises StatusException when closed.
    def opened
      @dbm || raise(StatusException, Status.new(Status::PRECONDITION_ERROR, "not opened index"))
    end

    # A key or value read back, in the index's encoding.
    def text(bytes)
      @encoding ? bytes.force_encoding(@encoding) : bytes
    end
  end

  # An iterator over an Index's pairs, in order: first, last, jump(key,
  # value = ""), next, previous, get -> [key, value] or nil.
  class IndexIterator
    def initialize(index)
      @index = index
      @iter = index.opened.make_iterator
    end

    def destruct
      @iter&.destruct
      @iter = nil
    end

    def first
      iter.first
    end

    def last
      iter.last
    end

    # To the first pair not before (key, value).
    def jump(key, value = "")
      iter.jump(Index.encode(key, value))
    end

    def next
      iter.next
    end

    def previous
      iter.previous
    end

    # The current pair, or nil.
    def get
      record_key = iter.get_key
      pair = record_key && Index.decode(record_key.b)
      pair&.map { |s| @index.text(s) }
    end

    def to_s
      pair = @iter ? get : nil
      pair ? "#{pair[0].dump}:#{pair[1].dump}" : "(unlocated)"
    end

    def inspect
      "#<Memstored::IndexIterator:#{self}>"
    end

    private

    def iter
      @iter || raise(StatusException, Status.new(Status::PRECONDITION_ERROR, "destructed iterator"))
    end
  end
end
