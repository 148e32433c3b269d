# frozen_string_literal: true

module Memstored
  # tkrzw-ruby's DBM calls about the database's files and about copying its
  # records elsewhere: file_size, file_path, timestamp, healthy?,
  # copy_file_data, restore_database, export, export_to_flat_records,
  # import_from_flat_records, export_keys_as_lines (the engine's, through
  # bindings/ruby/src/tkrzw.rs and file.rs, with tkrzw-ruby's signatures).
  class DBM
    # The size of the database's files in bytes, as the engine counts it
    # (an in-memory database: its records' bytes); for an on-memory class
    # kept in a file (.tiny, .cache, .stdhash), whose engine counts none,
    # the size of that file as last saved.
    def file_size
      size = file_size_native
      return size unless size.zero?

      data_files.sum { |f| ::File.exist?(f) ? ::File.size(f) : 0 }
    end

    # file_path, timestamp (of the open or the last synchronize) and
    # healthy? are the engine's (bindings/ruby/src/tkrzw.rs).

    # Writes a consistent copy of the database's files to dest_path (shards:
    # dest_path-0000N-of-0000M), made while other threads keep using it; it
    # opens as the database does. -> Status.
    def copy_file_data(dest_path, sync_hard = false)
      copy_file_data_native(dest_path.to_s, sync_hard ? true : false)
    end

    # Salvages the records of a (possibly damaged) database at
    # old_file_path into a new one at new_file_path (class_name: its Tkrzw
    # class, else the paths' extensions tell). The engine reads every intact
    # record to the end: a positive end_offset (stop there) and a
    # cipher_key (memstored's files are not encrypted) are NOT_IMPLEMENTED_ERROR.
    def self.restore_database(old_file_path, new_file_path, class_name = nil, end_offset = -1, cipher_key = nil)
      if end_offset.to_i.positive?
        return Status.new(Status::NOT_IMPLEMENTED_ERROR, "restore_database with a positive end_offset")
      end
      unless cipher_key.to_s.empty?
        return Status.new(Status::NOT_IMPLEMENTED_ERROR, "restore_database with a cipher_key")
      end

      params = class_name.to_s.empty? ? [] : [["dbm", class_name.to_s]]
      # Shards are found as Tkrzw finds them: by the first shard's file name.
      shards = shard_count(old_file_path.to_s)
      params << ["num_shards", shards.to_s] if shards
      restore_native(old_file_path.to_s, new_file_path.to_s, params)
    end

    # The number of shards of the database at path by its first shard's file name; nil when unsharded.
    def self.shard_count(path)
      dir, base = ::File.split(path)
      names = ::Dir.exist?(dir) ? ::Dir.children(dir) : []
      found = names.filter_map { |n| n.delete_prefix(base)[/\A-00000-of-(\d{5})\z/, 1] if n.start_with?(base) }
      found.empty? ? nil : found.first.to_i
    end
    private_class_method :shard_count

    # Stores every record into another open DBM. -> Status, the first failure.
    def export(dest_dbm)
      return Status.new(Status::INVALID_ARGUMENT_ERROR, "not a DBM") unless dest_dbm.is_a?(DBM)

      status = Status.new
      each do |key, value|
        status.join(dest_dbm.set(key, value))
        break unless status.ok?
      end
      status
    end

    # Replaces the file's content with every record as Tkrzw's flat
    # records (each key, then its value: a 0xFF byte, the size as a
    # base-128 number, the bytes), which Tkrzw's tools read. -> Status.
    def export_to_flat_records(dest_file)
      with_file(dest_file) { export_to_flat_records_native(dest_file) }
    end

    # Stores every key/value pair of a file of flat records (metadata
    # records in a key's place skipped). -> Status.
    def import_from_flat_records(src_file)
      with_file(src_file) { import_from_flat_records_native(src_file) }
    end

    # Replaces the file's content with every key, one a line. -> Status.
    def export_keys_as_lines(dest_file)
      with_file(dest_file) { export_keys_as_lines_native(dest_file) }
    end

    private

    # The files of the database: its path, or its shards' files.
    def data_files
      path = file_path
      return [] unless path

      shards = inspect_details["num_shards"].to_i
      return [path] if shards <= 1

      (0...shards).map { |i| format("%<path>s-%<i>05d-of-%<n>05d", path: path, i: i, n: shards) }
    end

    def with_file(file)
      return Status.new(Status::INVALID_ARGUMENT_ERROR, "not a Memstored::File") unless file.is_a?(Memstored::File)

      yield
    end
  end
end
