# frozen_string_literal: true

module Memstored
  # tkrzw-ruby's File: a file read and written at offsets, appended to,
  # truncated and searched line by line; the target of
  # DBM#export_to_flat_records and export_keys_as_lines and the source of
  # import_from_flat_records. The engine's file layer underneath
  # (bindings/ruby/src/file.rs; a writable open never follows a symlink).
  # Tkrzw's implementation choices (`file`, `alloc_*`, `no_lock`, ...) are
  # accepted and change nothing, but for `block_size` with the
  # `access_options` "padding": the engine pads the size to a multiple of
  # block_size on close, as Tkrzw's padded files are.
  #
  # Inside `module Memstored`, `File` is this class; Ruby's is `::File`.
  class File
    # Open parameters the binding consumes: `encoding` (of read results
    # and search lines) and tkrzw-ruby's `concurrent` (no effect here).
    BINDING_PARAMS = %w[encoding concurrent].freeze

    # open(path, writable, **params) -> Status. Params: truncate,
    # no_create, sync_hard, block_size, access_options, encoding, ...
    def open(path, writable, params = nil, **kwparams)
      all = (params || {}).merge(kwparams).transform_keys(&:to_s)
      encoding = all["encoding"]&.to_s
      BINDING_PARAMS.each { |name| all.delete(name) }
      status = open_native(path.to_s, writable ? true : false, all.map { |k, v| [k, v.to_s] })
      return status unless status.ok?

      @encoding = encoding ? Encoding.find(encoding) : nil
      status
    end

    # Closes the file (the engine pads its size first when opened so). -> Status.
    def close
      close_native
    end

    def destruct
      close if get_path
      nil
    end

    # read(offset, size, status = nil) -> the bytes, or nil (INFEASIBLE_ERROR
    # when they reach past the end).
    def read(offset, size, status = nil)
      result, data = read_native(offset.to_i, size.to_i)
      status&.set(result.code, result.message)
      data && @encoding ? data.force_encoding(@encoding) : data
    end

    # write(offset, data) -> Status.
    def write(offset, data)
      write_native(offset.to_i, data)
    end

    # append(data, status = nil) -> the offset it was written at, or nil.
    def append(data, status = nil)
      result, offset = append_native(data)
      status&.set(result.code, result.message)
      offset
    end

    # truncate(size) -> Status.
    def truncate(size)
      truncate_native(size.to_i)
    end

    # synchronize(hard, offset = 0, size = 0) -> Status; hard: to the device.
    def synchronize(hard, _offset = 0, _size = 0)
      synchronize_native(hard ? true : false)
    end

    # search(mode, pattern, capacity = 0) -> the lines matching, as
    # DBM#search matches keys; raises StatusException for an unknown mode.
    def search(mode, pattern, capacity = 0)
      lines = search_native(mode.to_s, pattern, capacity.to_i)
      @encoding ? lines.each { |l| l.force_encoding(@encoding) } : lines
    end

    def to_s
      path = get_path
      path ? "File:#{path}" : "File:(unopened)"
    end

    def inspect
      "#<Memstored::File:#{self}>"
    end
  end
end
