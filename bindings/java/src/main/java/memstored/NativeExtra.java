package memstored;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BOOLEAN;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static memstored.Native.UNBOUNDED;
import static memstored.Native.optional;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * The C API's calls beyond the first binding's (Tkrzw's process family, queue, export, file,
 * index ...), each linked only when the library has it: a null handle means an older library,
 * and the Java call answers NOT_IMPLEMENTED_ERROR naming the C function.
 */
final class NativeExtra {
  private NativeExtra() {}

  /** Tkrzw's TKRZW_ANY_DATA: a pointer meaning "any value" in compare-exchange. */
  static final MemorySegment ANY_DATA = Native.exported("MEMSTORED_ANY_DATA");
  /** A processor's answer "leave the record" (TKRZW_REC_PROC_NOOP). */
  static final MemorySegment REC_PROC_NOOP = Native.exported("MEMSTORED_REC_PROC_NOOP");
  /** A processor's answer "remove the record" (TKRZW_REC_PROC_REMOVE). */
  static final MemorySegment REC_PROC_REMOVE = Native.exported("MEMSTORED_REC_PROC_REMOVE");

  static final MethodHandle PROCESS = optional("memstored_dbm_process", JAVA_BOOLEAN,
      ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, JAVA_BOOLEAN);
  static final MethodHandle PROCESS_MULTI = optional("memstored_dbm_process_multi", JAVA_BOOLEAN,
      ADDRESS, ADDRESS, JAVA_INT, JAVA_BOOLEAN);
  static final MethodHandle PROCESS_FIRST = optional("memstored_dbm_process_first", JAVA_BOOLEAN,
      ADDRESS, ADDRESS, ADDRESS, JAVA_BOOLEAN);
  static final MethodHandle PROCESS_EACH = optional("memstored_dbm_process_each", JAVA_BOOLEAN,
      ADDRESS, ADDRESS, ADDRESS, JAVA_BOOLEAN);
  static final MethodHandle APPEND_MULTI = optional("memstored_dbm_append_multi", JAVA_BOOLEAN,
      ADDRESS, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT);
  static final MethodHandle COMPARE_EXCHANGE_AND_GET = optional(
      "memstored_dbm_compare_exchange_and_get", UNBOUNDED,
      ADDRESS, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS);
  static final MethodHandle REKEY = optional("memstored_dbm_rekey", JAVA_BOOLEAN,
      ADDRESS, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT, JAVA_BOOLEAN, JAVA_BOOLEAN);
  static final MethodHandle POP_FIRST = optional("memstored_dbm_pop_first", JAVA_BOOLEAN,
      ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS);
  static final MethodHandle PUSH_LAST = optional("memstored_dbm_push_last", JAVA_BOOLEAN,
      ADDRESS, ADDRESS, JAVA_INT, JAVA_DOUBLE);
  static final MethodHandle GET_FILE_SIZE =
      optional("memstored_dbm_get_file_size", JAVA_LONG, ADDRESS);
  static final MethodHandle GET_FILE_PATH =
      optional("memstored_dbm_get_file_path", UNBOUNDED, ADDRESS);
  static final MethodHandle GET_TIMESTAMP =
      optional("memstored_dbm_get_timestamp", JAVA_DOUBLE, ADDRESS);
  static final MethodHandle IS_HEALTHY = optional("memstored_dbm_is_healthy", JAVA_BOOLEAN, ADDRESS);
  static final MethodHandle COPY_FILE_DATA = optional("memstored_dbm_copy_file_data", JAVA_BOOLEAN,
      ADDRESS, ADDRESS, JAVA_BOOLEAN);
  static final MethodHandle EXPORT =
      optional("memstored_dbm_export", JAVA_BOOLEAN, ADDRESS, ADDRESS);
  static final MethodHandle EXPORT_TO_FLAT_RECORDS =
      optional("memstored_dbm_export_to_flat_records", JAVA_BOOLEAN, ADDRESS, ADDRESS);
  static final MethodHandle IMPORT_FROM_FLAT_RECORDS =
      optional("memstored_dbm_import_from_flat_records", JAVA_BOOLEAN, ADDRESS, ADDRESS);
  static final MethodHandle EXPORT_KEYS_AS_LINES =
      optional("memstored_dbm_export_keys_as_lines", JAVA_BOOLEAN, ADDRESS, ADDRESS);
  static final MethodHandle RESTORE_DATABASE = optional("memstored_dbm_restore_database",
      JAVA_BOOLEAN, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS);

  static final MethodHandle FILE_OPEN =
      optional("memstored_file_open", ADDRESS, ADDRESS, JAVA_BOOLEAN, ADDRESS);
  static final MethodHandle FILE_CLOSE = optional("memstored_file_close", JAVA_BOOLEAN, ADDRESS);
  static final MethodHandle FILE_READ = optional("memstored_file_read", JAVA_BOOLEAN,
      ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG);
  static final MethodHandle FILE_WRITE = optional("memstored_file_write", JAVA_BOOLEAN,
      ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG);
  static final MethodHandle FILE_APPEND = optional("memstored_file_append", JAVA_BOOLEAN,
      ADDRESS, ADDRESS, JAVA_LONG, ADDRESS);
  static final MethodHandle FILE_TRUNCATE =
      optional("memstored_file_truncate", JAVA_BOOLEAN, ADDRESS, JAVA_LONG);
  static final MethodHandle FILE_SYNCHRONIZE = optional("memstored_file_synchronize", JAVA_BOOLEAN,
      ADDRESS, JAVA_BOOLEAN, JAVA_LONG, JAVA_LONG);
  static final MethodHandle FILE_GET_SIZE = optional("memstored_file_get_size", JAVA_LONG, ADDRESS);
  static final MethodHandle FILE_GET_PATH =
      optional("memstored_file_get_path", UNBOUNDED, ADDRESS);
  static final MethodHandle FILE_SEARCH = optional("memstored_file_search", UNBOUNDED,
      ADDRESS, ADDRESS, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS);

  static final MethodHandle INDEX_OPEN =
      optional("memstored_index_open", ADDRESS, ADDRESS, JAVA_BOOLEAN, ADDRESS);
  static final MethodHandle INDEX_CLOSE = optional("memstored_index_close", JAVA_BOOLEAN, ADDRESS);
  static final MethodHandle INDEX_CHECK = optional("memstored_index_check", JAVA_BOOLEAN,
      ADDRESS, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT);
  static final MethodHandle INDEX_GET_VALUES = optional("memstored_index_get_values", UNBOUNDED,
      ADDRESS, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS);
  static final MethodHandle INDEX_ADD = optional("memstored_index_add", JAVA_BOOLEAN,
      ADDRESS, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT);
  static final MethodHandle INDEX_REMOVE = optional("memstored_index_remove", JAVA_BOOLEAN,
      ADDRESS, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT);
  static final MethodHandle INDEX_COUNT = optional("memstored_index_count", JAVA_INT, ADDRESS);
  static final MethodHandle INDEX_GET_FILE_PATH =
      optional("memstored_index_get_file_path", UNBOUNDED, ADDRESS);
  static final MethodHandle INDEX_CLEAR = optional("memstored_index_clear", JAVA_BOOLEAN, ADDRESS);
  static final MethodHandle INDEX_REBUILD =
      optional("memstored_index_rebuild", JAVA_BOOLEAN, ADDRESS);
  static final MethodHandle INDEX_SYNCHRONIZE =
      optional("memstored_index_synchronize", JAVA_BOOLEAN, ADDRESS, JAVA_BOOLEAN);
  static final MethodHandle INDEX_IS_WRITABLE =
      optional("memstored_index_is_writable", JAVA_BOOLEAN, ADDRESS);
  static final MethodHandle INDEX_MAKE_ITERATOR =
      optional("memstored_index_make_iterator", ADDRESS, ADDRESS);
  static final MethodHandle INDEX_ITER_FREE = optional("memstored_index_iter_free", null, ADDRESS);
  static final MethodHandle INDEX_ITER_FIRST = optional("memstored_index_iter_first", null, ADDRESS);
  static final MethodHandle INDEX_ITER_LAST = optional("memstored_index_iter_last", null, ADDRESS);
  static final MethodHandle INDEX_ITER_JUMP = optional("memstored_index_iter_jump", null,
      ADDRESS, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT);
  static final MethodHandle INDEX_ITER_NEXT = optional("memstored_index_iter_next", null, ADDRESS);
  static final MethodHandle INDEX_ITER_PREVIOUS =
      optional("memstored_index_iter_previous", null, ADDRESS);
  static final MethodHandle INDEX_ITER_GET = optional("memstored_index_iter_get", JAVA_BOOLEAN,
      ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS);

  /** NOT_IMPLEMENTED_ERROR naming the C function the library lacks. */
  static Status missing(String function) {
    return new Status(Status.NOT_IMPLEMENTED_ERROR,
        "libmemstored has no " + function + " (a newer library is needed)");
  }
}
