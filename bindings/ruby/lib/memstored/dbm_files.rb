# frozen_string_literal: true

module Memstored
  # tkrzw-ruby's DBM calls about the database's files and about copying its
  # records elsewhere: file_size, file_path, timestamp, healthy?,
  # copy_file_data, restore_database, export, export_to_flat_records,
  # import_from_flat_records, export_keys_as_lines (the engine's, through
  # bindings/ruby/src/tkrzw.rs and file.rs, with tkrzw-ruby's signatures).
  class DBM
    # file_size, file_path, timestamp (of the open or the last
    # synchronize) and healthy? are the engine's (bindings/ruby/src/tkrzw.rs).

    # Writes a consistent copy of the database's files to dest_path (shards:
    # dest_path-0000N-of-0000M), made while other threads keep using it; it
    # opens as the database does. -> Status.
    def copy_file_data(dest_path, sync_hard = false)
      copy_file_data_native(dest_path.to_s, sync_hard ? true : false)
    end

    # Salvages the records of a (possibly damaged) database at
    # old_file_path into a new one at new_file_path (class_name: its Tkrzw
    # class, else the paths' extensions tell; a sharded source is found by
    # its files, as Tkrzw finds it). The engine reads every intact record to
    # the end: a positive end_offset (stop there) and a cipher_key
    # (memstored's files are not encrypted) are NOT_IMPLEMENTED_ERROR.
    def self.restore_database(old_file_path, new_file_path, class_name = nil, end_offset = -1, cipher_key = nil)
      unless cipher_key.to_s.empty?
        return Status.new(Status::NOT_IMPLEMENTED_ERROR, "restore_database with a cipher_key")
      end

      restore_native(old_file_path.to_s, new_file_path.to_s, class_name.to_s, end_offset.to_i)
    end

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

    def with_file(file)
      return Status.new(Status::INVALID_ARGUMENT_ERROR, "not a Memstored::File") unless file.is_a?(Memstored::File)

      yield
    end
  end
end
