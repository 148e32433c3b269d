package memstored;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BOOLEAN;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * The C API (bindings/c/include/memstored.h) as cached method handles, and the copying between
 * Java arrays and the library's memory.
 *
 * <p>Tiny calls (get, set, remove, ...) are linked {@code critical(true)}: the JVM skips the
 * thread-state transition and passes Java arrays to the library in place, so a get costs two
 * short downcalls (the call and {@code memstored_free}) and no native allocation by Java. The
 * price is that a garbage collection waits for such a call to return, which is why the calls that
 * can take long (open, close, sync, rebuild, clear, search, multi-record calls, sets of 1 MiB
 * or more) are linked normally and copy their arguments into a confined arena instead. Gets of
 * large values stay critical: their size is known only after the call.
 *
 * <p>The library is found by the system property {@code memstored.library} (a path to
 * libmemstored.so), else the environment variable {@code MEMSTORED_LIBRARY}, else as
 * {@code memstored} on {@code java.library.path}.
 */
final class Native {
  private Native() {}

  /** A MemstoredStr: {ptr, int32 size} padded to 16 bytes. */
  static final long STR_BYTES = 16;

  /** A MemstoredKeyValuePair: {key_ptr, key_size, value_ptr, value_size} padded to 32 bytes. */
  static final long PAIR_BYTES = 32;

  /**
   * A pointer to memory of any size: the library's results and the pointers inside its arrays.
   * Declared so in the call's signature, it spares a restricted {@code reinterpret} per call,
   * which is slow until the JIT compiles it (a get cost four times as much for the first 100k).
   */
  static final AddressLayout UNBOUNDED =
      ADDRESS.withTargetLayout(MemoryLayout.sequenceLayout(Long.MAX_VALUE, JAVA_BYTE));

  private static final Linker LINKER = Linker.nativeLinker();
  private static final SymbolLookup LOOKUP = lookup();
  private static final Linker.Option CRITICAL = Linker.Option.critical(true);

  static final MethodHandle OPEN = call("memstored_dbm_open", ADDRESS, ADDRESS, JAVA_BOOLEAN, ADDRESS);
  static final MethodHandle CLOSE = call("memstored_dbm_close", JAVA_BOOLEAN, ADDRESS);
  static final MethodHandle GET = fast("memstored_dbm_get", UNBOUNDED, ADDRESS, ADDRESS, JAVA_INT, ADDRESS);
  static final MethodHandle GET_MULTI =
      call("memstored_dbm_get_multi", UNBOUNDED, ADDRESS, ADDRESS, JAVA_INT, ADDRESS);
  static final MethodHandle SET =
      fast("memstored_dbm_set", JAVA_BOOLEAN, ADDRESS, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT, JAVA_BOOLEAN);
  /** SET linked normally, for large records: a GC need not wait while they are copied. */
  static final MethodHandle SET_LARGE =
      call("memstored_dbm_set", JAVA_BOOLEAN, ADDRESS, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT, JAVA_BOOLEAN);
  /** Records from this size on are set through SET_LARGE (a copy costs less than the call then). */
  static final int LARGE = 1 << 20;
  static final MethodHandle SET_AND_GET = fast("memstored_dbm_set_and_get", UNBOUNDED,
      ADDRESS, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT, JAVA_BOOLEAN, ADDRESS);
  static final MethodHandle SET_MULTI =
      call("memstored_dbm_set_multi", JAVA_BOOLEAN, ADDRESS, ADDRESS, JAVA_INT, JAVA_BOOLEAN);
  static final MethodHandle REMOVE = fast("memstored_dbm_remove", JAVA_BOOLEAN, ADDRESS, ADDRESS, JAVA_INT);
  static final MethodHandle REMOVE_AND_GET =
      fast("memstored_dbm_remove_and_get", UNBOUNDED, ADDRESS, ADDRESS, JAVA_INT, ADDRESS);
  static final MethodHandle REMOVE_MULTI =
      call("memstored_dbm_remove_multi", JAVA_BOOLEAN, ADDRESS, ADDRESS, JAVA_INT);
  static final MethodHandle APPEND = fast("memstored_dbm_append", JAVA_BOOLEAN,
      ADDRESS, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT);
  static final MethodHandle COMPARE_EXCHANGE = fast("memstored_dbm_compare_exchange", JAVA_BOOLEAN,
      ADDRESS, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT);
  static final MethodHandle INCREMENT =
      fast("memstored_dbm_increment", JAVA_LONG, ADDRESS, ADDRESS, JAVA_INT, JAVA_LONG, JAVA_LONG);
  static final MethodHandle COMPARE_EXCHANGE_MULTI = call("memstored_dbm_compare_exchange_multi",
      JAVA_BOOLEAN, ADDRESS, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT);
  static final MethodHandle COUNT = fast("memstored_dbm_count", JAVA_LONG, ADDRESS);
  static final MethodHandle CLEAR = call("memstored_dbm_clear", JAVA_BOOLEAN, ADDRESS);
  static final MethodHandle REBUILD = call("memstored_dbm_rebuild", JAVA_BOOLEAN, ADDRESS, ADDRESS);
  static final MethodHandle SHOULD_BE_REBUILT =
      fast("memstored_dbm_should_be_rebuilt", JAVA_BOOLEAN, ADDRESS);
  static final MethodHandle SYNCHRONIZE =
      call("memstored_dbm_synchronize", JAVA_BOOLEAN, ADDRESS, JAVA_BOOLEAN, ADDRESS);
  static final MethodHandle INSPECT = call("memstored_dbm_inspect", UNBOUNDED, ADDRESS, ADDRESS);
  static final MethodHandle IS_WRITABLE = fast("memstored_dbm_is_writable", JAVA_BOOLEAN, ADDRESS);
  static final MethodHandle IS_ORDERED = fast("memstored_dbm_is_ordered", JAVA_BOOLEAN, ADDRESS);
  static final MethodHandle SEARCH = call("memstored_dbm_search", UNBOUNDED,
      ADDRESS, ADDRESS, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS);
  static final MethodHandle MAKE_ITERATOR = call("memstored_dbm_make_iterator", ADDRESS, ADDRESS);
  static final MethodHandle ITER_FREE = callVoid("memstored_dbm_iter_free", ADDRESS);
  static final MethodHandle ITER_FIRST = fast("memstored_dbm_iter_first", JAVA_BOOLEAN, ADDRESS);
  static final MethodHandle ITER_LAST = fast("memstored_dbm_iter_last", JAVA_BOOLEAN, ADDRESS);
  static final MethodHandle ITER_JUMP =
      fast("memstored_dbm_iter_jump", JAVA_BOOLEAN, ADDRESS, ADDRESS, JAVA_INT);
  static final MethodHandle ITER_JUMP_LOWER = fast("memstored_dbm_iter_jump_lower", JAVA_BOOLEAN,
      ADDRESS, ADDRESS, JAVA_INT, JAVA_BOOLEAN);
  static final MethodHandle ITER_JUMP_UPPER = fast("memstored_dbm_iter_jump_upper", JAVA_BOOLEAN,
      ADDRESS, ADDRESS, JAVA_INT, JAVA_BOOLEAN);
  static final MethodHandle ITER_NEXT = fast("memstored_dbm_iter_next", JAVA_BOOLEAN, ADDRESS);
  static final MethodHandle ITER_PREVIOUS = fast("memstored_dbm_iter_previous", JAVA_BOOLEAN, ADDRESS);
  static final MethodHandle ITER_GET = fast("memstored_dbm_iter_get", JAVA_BOOLEAN,
      ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS);
  static final MethodHandle ITER_GET_KEY =
      fast("memstored_dbm_iter_get_key", UNBOUNDED, ADDRESS, ADDRESS);
  static final MethodHandle ITER_GET_VALUE =
      fast("memstored_dbm_iter_get_value", UNBOUNDED, ADDRESS, ADDRESS);
  static final MethodHandle ITER_SET =
      fast("memstored_dbm_iter_set", JAVA_BOOLEAN, ADDRESS, ADDRESS, JAVA_INT);
  static final MethodHandle ITER_REMOVE = fast("memstored_dbm_iter_remove", JAVA_BOOLEAN, ADDRESS);
  static final MethodHandle ITER_STEP = fast("memstored_dbm_iter_step", JAVA_BOOLEAN,
      ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS);
  private static final MethodHandle FREE = fastVoid("memstored_free", ADDRESS);
  private static final MethodHandle LAST_CODE = fast("memstored_get_last_status_code", JAVA_INT);
  private static final MethodHandle LAST_MESSAGE =
      fast("memstored_get_last_status_message", UNBOUNDED);

  private static SymbolLookup lookup() {
    String path = System.getProperty("memstored.library", System.getenv("MEMSTORED_LIBRARY"));
    if (path != null && !path.isEmpty()) {
      return SymbolLookup.libraryLookup(Path.of(path), Arena.global());
    }
    System.loadLibrary("memstored");
    return SymbolLookup.loaderLookup();
  }

  private static MemorySegment symbol(String name) {
    return LOOKUP.find(name).orElseThrow(
        () -> new UnsatisfiedLinkError("libmemstored has no symbol " + name));
  }

  /**
   * A normal downcall to a function the library may lack (one newer than it): null when the
   * symbol is absent, so that the calls using it report NOT_IMPLEMENTED_ERROR instead of the
   * whole binding failing to load.
   */
  static MethodHandle optional(String name, MemoryLayout ret, MemoryLayout... args) {
    return LOOKUP.find(name).map(sym -> LINKER.downcallHandle(sym,
        ret == null ? FunctionDescriptor.ofVoid(args) : FunctionDescriptor.of(ret, args)))
        .orElse(null);
  }

  /**
   * The address of a static the library exports (its special pointers, such as
   * MEMSTORED_ANY_DATA, are one-byte arrays compared by address); NULL when absent.
   */
  static MemorySegment exported(String name) {
    return LOOKUP.find(name).orElse(MemorySegment.NULL);
  }

  /** A call that may take long or allocates: a normal downcall. */
  private static MethodHandle call(String name, MemoryLayout ret, MemoryLayout... args) {
    return LINKER.downcallHandle(symbol(name), FunctionDescriptor.of(ret, args));
  }

  private static MethodHandle callVoid(String name, MemoryLayout... args) {
    return LINKER.downcallHandle(symbol(name), FunctionDescriptor.ofVoid(args));
  }

  /** A tiny call: critical, and Java arrays may be passed as heap segments. */
  private static MethodHandle fast(String name, MemoryLayout ret, MemoryLayout... args) {
    return LINKER.downcallHandle(symbol(name), FunctionDescriptor.of(ret, args), CRITICAL);
  }

  private static MethodHandle fastVoid(String name, MemoryLayout... args) {
    return LINKER.downcallHandle(symbol(name), FunctionDescriptor.ofVoid(args), CRITICAL);
  }

  /** A Java array as an argument of a critical call; null is C's NULL. */
  static MemorySegment heap(byte[] bytes) {
    return bytes == null ? MemorySegment.NULL : MemorySegment.ofArray(bytes);
  }

  static byte[] utf8(String s) {
    return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
  }

  static String string(byte[] bytes) {
    return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
  }

  /** Copies {@code size} bytes the library returned at {@code ptr} and frees them; NULL: null. */
  static byte[] take(MemorySegment ptr, int size) {
    if (ptr.address() == 0) {
      return null;
    }
    byte[] out = copy(ptr, size);
    free(ptr);
    return out;
  }

  /** Reads the NUL-terminated UTF-8 text the library returned at {@code ptr}, then frees it. */
  static String takeString(MemorySegment ptr) {
    String out = ptr.getString(0);
    free(ptr);
    return out;
  }

  /** Copies {@code size} bytes at {@code ptr} without freeing them. */
  static byte[] copy(MemorySegment ptr, int size) {
    byte[] out = new byte[size];
    MemorySegment.copy(ptr, JAVA_BYTE, 0, out, 0, size);
    return out;
  }

  static void free(MemorySegment ptr) {
    try {
      FREE.invokeExact(ptr);
    } catch (Throwable t) {
      throw fail(t);
    }
  }

  /** A copy of the bytes in native memory of the arena; null is C's NULL. */
  static MemorySegment copyIn(Arena arena, byte[] bytes) {
    if (bytes == null) {
      return MemorySegment.NULL;
    }
    MemorySegment seg = arena.allocate(Math.max(1, bytes.length));
    MemorySegment.copy(bytes, 0, seg, JAVA_BYTE, 0, bytes.length);
    return seg;
  }

  /** A NUL-terminated copy of the text; null is C's NULL. */
  static MemorySegment cString(Arena arena, String s) {
    return s == null ? MemorySegment.NULL : arena.allocateFrom(s);
  }

  /** A MemstoredStr array of the keys. */
  static MemorySegment strs(Arena arena, byte[][] keys) {
    MemorySegment arr = arena.allocate(STR_BYTES * Math.max(1, keys.length), 8);
    for (int i = 0; i < keys.length; i++) {
      arr.set(ADDRESS, i * STR_BYTES, copyIn(arena, keys[i]));
      arr.set(JAVA_INT, i * STR_BYTES + 8, keys[i].length);
    }
    return arr;
  }

  /** A MemstoredKeyValuePair array of the records; a null value stays NULL. */
  static MemorySegment pairs(Arena arena, byte[][] keys, byte[][] values) {
    MemorySegment arr = arena.allocate(PAIR_BYTES * Math.max(1, keys.length), 8);
    for (int i = 0; i < keys.length; i++) {
      long off = i * PAIR_BYTES;
      arr.set(ADDRESS, off, copyIn(arena, keys[i]));
      arr.set(JAVA_INT, off + 8, keys[i].length);
      arr.set(ADDRESS, off + 16, copyIn(arena, values[i]));
      arr.set(JAVA_INT, off + 24, values[i] == null ? 0 : values[i].length);
    }
    return arr;
  }

  /** Reads a MemstoredKeyValuePair array of {@code n} the library returned, then frees it. */
  static byte[][][] takePairs(MemorySegment ptr, int n) {
    if (ptr.address() == 0) {
      return new byte[0][][];
    }
    MemorySegment arr = ptr;
    byte[][][] out = new byte[n][][];
    for (int i = 0; i < n; i++) {
      long off = i * PAIR_BYTES;
      out[i] = new byte[][] {
          copy(arr.get(UNBOUNDED, off), arr.get(JAVA_INT, off + 8)),
          copy(arr.get(UNBOUNDED, off + 16), arr.get(JAVA_INT, off + 24))};
    }
    free(ptr);
    return out;
  }

  /** Reads a MemstoredStr array of {@code n} the library returned, then frees it. */
  static byte[][] takeStrs(MemorySegment ptr, int n) {
    if (ptr.address() == 0) {
      return new byte[0][];
    }
    MemorySegment arr = ptr;
    byte[][] out = new byte[n][];
    for (int i = 0; i < n; i++) {
      out[i] = copy(arr.get(UNBOUNDED, i * STR_BYTES), arr.get(JAVA_INT, i * STR_BYTES + 8));
    }
    free(ptr);
    return out;
  }

  /** This thread's last status code. */
  static int lastCode() {
    try {
      return (int) LAST_CODE.invokeExact();
    } catch (Throwable t) {
      throw fail(t);
    }
  }

  /** This thread's last status, code and message. */
  static Status last() {
    Status status = new Status();
    fillLast(status);
    return status;
  }

  /** Sets {@code status} (when not null) to this thread's last status. */
  static void fillLast(Status status) {
    if (status == null) {
      return;
    }
    try {
      int code = (int) LAST_CODE.invokeExact();
      MemorySegment msg = (MemorySegment) LAST_MESSAGE.invokeExact();
      String text = msg.address() == 0 ? "" : msg.getString(0);
      status.set(Status.Code.valueOf(code), text);
    } catch (Throwable t) {
      throw fail(t);
    }
  }

  /** A downcall's Throwable as an unchecked one (they throw only on linkage bugs). */
  static RuntimeException fail(Throwable t) {
    if (t instanceof RuntimeException r) {
      throw r;
    }
    if (t instanceof Error e) {
      throw e;
    }
    return new IllegalStateException(t);
  }
}
