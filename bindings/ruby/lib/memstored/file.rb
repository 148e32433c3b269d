# frozen_string_literal: true

module Memstored
  # tkrzw-ruby's File: a plain file read and written at offsets, the
  # target of DBM#export_to_flat_records and export_keys_as_lines and the
  # source of import_from_flat_records. Over Ruby's own file I/O
  # (positional reads and writes, so threads may share one); Tkrzw's
  # implementation choices (`file`, `alloc_*`, `access_options` but
  # "padding") are accepted and change nothing.
  #
  # Inside `module Memstored`, `File` is this class; Ruby's is `::File`.
  class File
    # Lines of a text file matching a pattern, as DBM#search matches keys.
    module Search
      WORD = /\A\p{Word}\z/

      # The lines (without their newline) that `mode` finds for `pattern`,
      # at most `capacity` (0: all). Raises StatusException for an unknown mode.
      def self.lines(text, mode, pattern, capacity)
        lines = text.split("\n", -1)
        lines.pop if lines.last == ""
        found = matcher(mode.to_s, pattern.to_s.b, lines, capacity)
        capacity.positive? ? found.first(capacity) : found
      end

      def self.matcher(mode, pattern, lines, capacity)
        case mode
        when "contain" then lines.select { |l| l.b.include?(pattern) }
        when "containcase" then lines.select { |l| l.b.downcase.include?(pattern.downcase) }
        when "containword" then lines.select { |l| word?(l.b, pattern) }
        when "containcaseword" then lines.select { |l| word?(l.b.downcase, pattern.downcase) }
        when "begin" then lines.select { |l| l.b.start_with?(pattern) }
        when "end" then lines.select { |l| l.b.end_with?(pattern) }
        when "regex" then regex(lines, pattern)
        when "edit", "editbin" then nearest(lines, pattern, mode == "edit", capacity)
        else raise StatusException, Status.new(Status::INVALID_ARGUMENT_ERROR, "unknown mode: #{mode}")
        end
      end

      def self.word?(line, word)
        start = 0
        while (at = line.index(word, start))
          before = at.zero? ? "" : line[at - 1]
          after = line[at + word.size].to_s
          return true if !WORD.match?(before) && !WORD.match?(after)

          start = at + 1
        end
        false
      end

      def self.regex(lines, pattern)
        re = Regexp.new(pattern.dup.force_encoding(Encoding::UTF_8))
        lines.select { |l| re.match?(l.dup.force_encoding(Encoding::UTF_8).scrub) }
      rescue RegexpError => e
        raise StatusException, Status.new(Status::INVALID_ARGUMENT_ERROR, "bad regex: #{e.message}")
      end

      # The lines nearest to the pattern by edit distance (of characters for
      # edit, of bytes for editbin), nearest first.
      def self.nearest(lines, pattern, utf, capacity)
        ranked = lines.map { |l| [Utility.edit_distance_lev(l, pattern, utf), l] }.sort
        ranked = ranked.first(capacity) if capacity.positive?
        ranked.map(&:last)
      end
    end

    def initialize
      @io = nil
      @lock = Mutex.new
    end

    # open(path, writable, **params) -> Status. Params: truncate, no_create,
    # block_size with access_options "padding" (the size is padded to a
    # multiple of block_size on close), encoding (of read results).
    def open(path, writable, params = nil, **kwparams)
      return Status.new(Status::PRECONDITION_ERROR, "opened file") if @io

      all = (params || {}).merge(kwparams).transform_keys(&:to_s)
      truthy = ->(name) { %w[true 1 yes].include?(all[name].to_s.downcase) }
      flags = writable ? ::File::RDWR : ::File::RDONLY
      flags |= ::File::CREAT if writable && !truthy.call("no_create")
      flags |= ::File::TRUNC if writable && truthy.call("truncate")
      @io = ::File.new(path.to_s, flags | ::File::BINARY, 0o644)
      @path = path.to_s
      @writable = writable ? true : false
      @encoding = all["encoding"] ? Encoding.find(all["encoding"].to_s) : nil
      @padding = all["access_options"].to_s.split(":").include?("padding") ? all["block_size"].to_i : 0
      Status.new
    rescue SystemCallError, IOError => e
      @io = nil
      Status.new(Status::SYSTEM_ERROR, e.message)
    end

    # Closes the file (padding its size first when opened so). -> Status.
    def close
      io = @io
      return Status.new(Status::PRECONDITION_ERROR, "not opened file") unless io

      @lock.synchronize do
        pad(io)
        io.close
        @io = nil
      end
      Status.new
    rescue SystemCallError, IOError => e
      Status.new(Status::SYSTEM_ERROR, e.message)
    end

    def destruct
      close if @io
      nil
    end

    # read(offset, size, status = nil) -> the bytes, or nil (INFEASIBLE_ERROR
    # when they reach past the end).
    def read(offset, size, status = nil)
      data = io_call(status) do |io|
        raise RangeError if offset.to_i + size.to_i > io.size

        size.to_i.zero? ? "".b : io.pread(size.to_i, offset.to_i)
      end
      data&.force_encoding(@encoding) if @encoding
      data
    end

    # write(offset, data) -> Status.
    def write(offset, data)
      status = Status.new
      io_call(status, true) { |io| io.pwrite(data.to_s, offset.to_i) }
      status
    end

    # append(data, status = nil) -> the offset it was written at, or nil.
    def append(data, status = nil)
      io_call(status, true) do |io|
        at = io.size
        io.pwrite(data.to_s, at)
        at
      end
    end

    # truncate(size) -> Status.
    def truncate(size)
      status = Status.new
      io_call(status, true) { |io| io.truncate(size.to_i) }
      status
    end

    # synchronize(hard, offset = 0, size = 0) -> Status; hard: to the device.
    def synchronize(hard, _offset = 0, _size = 0)
      status = Status.new
      io_call(status) { |io| hard ? io.fsync : io.flush }
      status
    end

    def get_size
      @lock.synchronize { @io&.size }
    end

    def get_path
      @io ? @path : nil
    end

    # search(mode, pattern, capacity = 0) -> the lines matching.
    def search(mode, pattern, capacity = 0)
      status = Status.new
      text = read(0, get_size.to_i, status)
      raise StatusException, status unless status.ok?

      Search.lines(text, mode, pattern, capacity.to_i).map { |l| @encoding ? l.force_encoding(@encoding) : l }
    end

    def to_s
      @io ? "File:#{@path}" : "File:(unopened)"
    end

    def inspect
      "#<Memstored::File:#{self}>"
    end

    private

    # Runs the block on the open file under the lock; failures become the
    # status (nil returned). A writing call on a read-only file is refused.
    def io_call(status, writing = false)
      result = @lock.synchronize do
        raise IOError, "not opened file" unless @io
        raise IOError, "not writable file" if writing && !@writable

        yield @io
      end
      status&.set(Status::SUCCESS, "")
      result
    rescue RangeError
      status&.set(Status::INFEASIBLE_ERROR, "reading beyond the end of the file")
      nil
    rescue IOError => e
      status&.set(e.message.start_with?("not") ? Status::PRECONDITION_ERROR : Status::SYSTEM_ERROR, e.message)
      nil
    rescue SystemCallError => e
      status&.set(Status::SYSTEM_ERROR, e.message)
      nil
    end

    def pad(io)
      return unless @writable && @padding.positive?

      rest = io.size % @padding
      io.truncate(io.size + @padding - rest) unless rest.zero?
    end
  end
end
