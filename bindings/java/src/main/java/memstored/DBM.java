package memstored;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static memstored.Native.heap;
import static memstored.Native.string;
import static memstored.Native.utf8;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A memstored database, with tkrzw-java's {@code DBM} API: a program written for tkrzw-java
 * switches by importing {@code memstored.*} instead of {@code tkrzw.*}.
 *
 * <p>Every method but {@link #open} and {@link #close} may be called by many threads at once on
 * one open database. {@code open}'s path picks the engine as memstored's database names do
 * ({@code casket.tkh} hash file, {@code casket.tkt} ordered file, {@code *} in-memory hash,
 * {@code +} in-memory ordered); the parameters are memstored's ({@code truncate},
 * {@code num_buckets}, {@code num_shards}, ...).
 *
 * <p>Beyond tkrzw-java: nothing. Short of it: {@code process}, {@code rekey}, {@code popFirst},
 * {@code export}, {@code ANY_BYTES} and the other calls the C API does not offer.
 * {@link #increment} stores decimal text, not Tkrzw's 8 big-endian bytes.
 */
public class DBM {
  private static final Status NOT_OPENED = new Status(Status.PRECONDITION_ERROR, "not opened");

  /** The C handle; NULL while not open. Volatile so a closed handle is seen by every thread. */
  private volatile MemorySegment handle = MemorySegment.NULL;

  public DBM() {}

  /** Closes the database if it is open. */
  public void destruct() {
    if (isOpen()) {
      close();
    }
  }

  /**
   * Opens a database.
   *
   * @param params parameters such as {@code truncate=true}, {@code num_buckets=1000}; null: none
   */
  public Status open(String path, boolean writable, Map<String, String> params) {
    if (isOpen()) {
      return new Status(Status.PRECONDITION_ERROR, "opened already");
    }
    StringBuilder joined = new StringBuilder();
    if (params != null) {
      for (Map.Entry<String, String> e : params.entrySet()) {
        joined.append(joined.isEmpty() ? "" : ",").append(e.getKey()).append('=').append(e.getValue());
      }
    }
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment h = (MemorySegment) Native.OPEN.invokeExact(
          arena.allocateFrom(path), writable, arena.allocateFrom(joined.toString()));
      if (h.address() == 0) {
        return Native.last();
      }
      handle = h;
      return new Status();
    } catch (Throwable t) {
      throw Native.fail(t);
    }
  }

  /** Opens with parameters as {@code "k=v,k=v"}. */
  public Status open(String path, boolean writable, String params) {
    return open(path, writable, parseParams(params));
  }

  public Status open(String path, boolean writable) {
    return open(path, writable, (Map<String, String>) null);
  }

  /** Closes the database; the handle is released even when closing reports an error. */
  public Status close() {
    MemorySegment h = handle;
    if (h.address() == 0) {
      return NOT_OPENED.clone();
    }
    handle = MemorySegment.NULL;
    try {
      return done((boolean) Native.CLOSE.invokeExact(h));
    } catch (Throwable t) {
      throw Native.fail(t);
    }
  }

  public boolean isOpen() {
    return handle.address() != 0;
  }

  public boolean contains(byte[] key) {
    return get(key, null) != null;
  }

  public boolean contains(String key) {
    return contains(utf8(key));
  }

  /** The value of the key, or null (NOT_FOUND_ERROR in {@code status}, when given). */
  public byte[] get(byte[] key, Status status) {
    MemorySegment h = handle;
    if (h.address() == 0) {
      return notOpened(status, null);
    }
    int[] size = new int[1];
    try {
      MemorySegment p = (MemorySegment) Native.GET.invokeExact(
          h, heap(key), key.length, MemorySegment.ofArray(size));
      if (p.address() == 0) {
        Native.fillLast(status);
        return null;
      }
      if (status != null) {
        status.set(Status.SUCCESS, "");
      }
      return Native.take(p, size[0]);
    } catch (Throwable t) {
      throw Native.fail(t);
    }
  }

  public byte[] get(byte[] key) {
    return get(key, null);
  }

  public String get(String key, Status status) {
    return string(get(utf8(key), status));
  }

  public String get(String key) {
    return get(key, null);
  }

  /** The records of the keys that exist; absent keys are left out. */
  public Map<byte[], byte[]> getMulti(byte[][] keys) {
    Map<byte[], byte[]> out = new LinkedHashMap<>();
    for (byte[][] kv : getMultiRaw(keys)) {
      out.put(kv[0], kv[1]);
    }
    return out;
  }

  public Map<String, String> getMulti(String[] keys) {
    byte[][] raw = new byte[keys.length][];
    for (int i = 0; i < keys.length; i++) {
      raw[i] = utf8(keys[i]);
    }
    Map<String, String> out = new LinkedHashMap<>();
    for (byte[][] kv : getMultiRaw(raw)) {
      out.put(string(kv[0]), string(kv[1]));
    }
    return out;
  }

  private byte[][][] getMultiRaw(byte[][] keys) {
    MemorySegment h = handle;
    if (h.address() == 0) {
      return new byte[0][][];
    }
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment num = arena.allocate(4);
      MemorySegment p = (MemorySegment) Native.GET_MULTI.invokeExact(
          h, Native.strs(arena, keys), keys.length, num);
      return Native.takePairs(p, p.address() == 0 ? 0 : num.get(JAVA_INT, 0));
    } catch (Throwable t) {
      throw Native.fail(t);
    }
  }

  /** Stores a record; with {@code overwrite} false an existing one is kept: DUPLICATION_ERROR. */
  public Status set(byte[] key, byte[] value, boolean overwrite) {
    MemorySegment h = handle;
    if (h.address() == 0) {
      return NOT_OPENED.clone();
    }
    if (key.length + value.length >= Native.LARGE) {
      try (Arena arena = Arena.ofConfined()) {
        return done((boolean) Native.SET_LARGE.invokeExact(h, Native.copyIn(arena, key), key.length,
            Native.copyIn(arena, value), value.length, overwrite));
      } catch (Throwable t) {
        throw Native.fail(t);
      }
    }
    try {
      return done((boolean) Native.SET.invokeExact(
          h, heap(key), key.length, heap(value), value.length, overwrite));
    } catch (Throwable t) {
      throw Native.fail(t);
    }
  }

  public Status set(byte[] key, byte[] value) {
    return set(key, value, true);
  }

  public Status set(String key, String value, boolean overwrite) {
    return set(utf8(key), utf8(value), overwrite);
  }

  public Status set(String key, String value) {
    return set(key, value, true);
  }

  /** Stores every record; with {@code overwrite} false existing ones are kept: DUPLICATION_ERROR. */
  public Status setMulti(Map<byte[], byte[]> records, boolean overwrite) {
    byte[][][] kv = Records.of(records);
    MemorySegment h = handle;
    if (h.address() == 0) {
      return NOT_OPENED.clone();
    }
    try (Arena arena = Arena.ofConfined()) {
      return done((boolean) Native.SET_MULTI.invokeExact(
          h, Native.pairs(arena, kv[0], kv[1]), kv[0].length, overwrite));
    } catch (Throwable t) {
      throw Native.fail(t);
    }
  }

  public Status setMultiString(Map<String, String> records, boolean overwrite) {
    return setMulti(Records.utf8(records), overwrite);
  }

  /** Stores a record and gives the old value (null when there was none). Atomic. */
  public Status.And<byte[]> setAndGet(byte[] key, byte[] value, boolean overwrite) {
    MemorySegment h = handle;
    if (h.address() == 0) {
      return new Status.And<>(NOT_OPENED.clone(), null);
    }
    int[] size = new int[1];
    try {
      MemorySegment p = (MemorySegment) Native.SET_AND_GET.invokeExact(h, heap(key), key.length,
          heap(value), value.length, overwrite, MemorySegment.ofArray(size));
      // A NULL result is "no old value" or a failure; the last status tells which.
      Status status = Native.lastCode() == 0 ? new Status() : Native.last();
      return new Status.And<>(status, Native.take(p, size[0]));
    } catch (Throwable t) {
      throw Native.fail(t);
    }
  }

  public Status.And<String> setAndGet(String key, String value, boolean overwrite) {
    Status.And<byte[]> r = setAndGet(utf8(key), utf8(value), overwrite);
    return new Status.And<>(r.status, string(r.value));
  }

  /** Removes a record; NOT_FOUND_ERROR when absent. */
  public Status remove(byte[] key) {
    MemorySegment h = handle;
    if (h.address() == 0) {
      return NOT_OPENED.clone();
    }
    try {
      return done((boolean) Native.REMOVE.invokeExact(h, heap(key), key.length));
    } catch (Throwable t) {
      throw Native.fail(t);
    }
  }

  public Status remove(String key) {
    return remove(utf8(key));
  }

  /** Removes every key; NOT_FOUND_ERROR when some were absent (the rest are removed). */
  public Status removeMulti(byte[][] keys) {
    MemorySegment h = handle;
    if (h.address() == 0) {
      return NOT_OPENED.clone();
    }
    try (Arena arena = Arena.ofConfined()) {
      return done((boolean) Native.REMOVE_MULTI.invokeExact(h, Native.strs(arena, keys), keys.length));
    } catch (Throwable t) {
      throw Native.fail(t);
    }
  }

  public Status removeMulti(String[] keys) {
    byte[][] raw = new byte[keys.length][];
    for (int i = 0; i < keys.length; i++) {
      raw[i] = utf8(keys[i]);
    }
    return removeMulti(raw);
  }

  /** Removes a record and gives its value; NOT_FOUND_ERROR and null when absent. */
  public Status.And<byte[]> removeAndGet(byte[] key) {
    MemorySegment h = handle;
    if (h.address() == 0) {
      return new Status.And<>(NOT_OPENED.clone(), null);
    }
    int[] size = new int[1];
    try {
      MemorySegment p = (MemorySegment) Native.REMOVE_AND_GET.invokeExact(
          h, heap(key), key.length, MemorySegment.ofArray(size));
      return new Status.And<>(p.address() == 0 ? Native.last() : new Status(), Native.take(p, size[0]));
    } catch (Throwable t) {
      throw Native.fail(t);
    }
  }

  public Status.And<String> removeAndGet(String key) {
    Status.And<byte[]> r = removeAndGet(utf8(key));
    return new Status.And<>(r.status, string(r.value));
  }

  /** Appends the value after the delimiter, or stores it when the record is absent. */
  public Status append(byte[] key, byte[] value, byte[] delim) {
    MemorySegment h = handle;
    if (h.address() == 0) {
      return NOT_OPENED.clone();
    }
    byte[] d = delim == null ? new byte[0] : delim;
    try {
      return done((boolean) Native.APPEND.invokeExact(
          h, heap(key), key.length, heap(value), value.length, heap(d), d.length));
    } catch (Throwable t) {
      throw Native.fail(t);
    }
  }

  public Status append(String key, String value, String delim) {
    return append(utf8(key), utf8(value), utf8(delim));
  }

  /**
   * Replaces the record when it holds {@code expected} (null: must be absent) with
   * {@code desired} (null: remove it); INFEASIBLE_ERROR otherwise.
   */
  public Status compareExchange(byte[] key, byte[] expected, byte[] desired) {
    MemorySegment h = handle;
    if (h.address() == 0) {
      return NOT_OPENED.clone();
    }
    try {
      return done((boolean) Native.COMPARE_EXCHANGE.invokeExact(h, heap(key), key.length,
          heap(expected), expected == null ? 0 : expected.length,
          heap(desired), desired == null ? 0 : desired.length));
    } catch (Throwable t) {
      throw Native.fail(t);
    }
  }

  public Status compareExchange(String key, String expected, String desired) {
    return compareExchange(utf8(key), utf8(expected), utf8(desired));
  }

  /**
   * Adds {@code inc} to the record's decimal value (absent: {@code init}) and gives the new
   * value; Long.MIN_VALUE on failure. With {@code inc} Long.MIN_VALUE, gives the current value.
   */
  public long increment(byte[] key, long inc, long init, Status status) {
    MemorySegment h = handle;
    if (h.address() == 0) {
      return notOpened(status, Long.MIN_VALUE);
    }
    try {
      long r = (long) Native.INCREMENT.invokeExact(h, heap(key), key.length, inc, init);
      if (r == Long.MIN_VALUE && Native.lastCode() != 0) {
        Native.fillLast(status);
      } else if (status != null) {
        status.set(Status.SUCCESS, "");
      }
      return r;
    } catch (Throwable t) {
      throw Native.fail(t);
    }
  }

  public long increment(String key, long inc, long init, Status status) {
    return increment(utf8(key), inc, init, status);
  }

  /**
   * Atomically: when every expected record holds its value (null: is absent), stores every
   * desired one (null: removes it); else INFEASIBLE_ERROR and nothing changes.
   */
  public Status compareExchangeMulti(Map<byte[], byte[]> expected, Map<byte[], byte[]> desired) {
    byte[][][] exp = Records.of(expected);
    byte[][][] des = Records.of(desired);
    MemorySegment h = handle;
    if (h.address() == 0) {
      return NOT_OPENED.clone();
    }
    try (Arena arena = Arena.ofConfined()) {
      return done((boolean) Native.COMPARE_EXCHANGE_MULTI.invokeExact(h,
          Native.pairs(arena, exp[0], exp[1]), exp[0].length,
          Native.pairs(arena, des[0], des[1]), des[0].length));
    } catch (Throwable t) {
      throw Native.fail(t);
    }
  }

  public Status compareExchangeMultiString(Map<String, String> expected, Map<String, String> desired) {
    return compareExchangeMulti(Records.utf8(expected), Records.utf8(desired));
  }

  /** The number of records, or -1 on failure. */
  public long count() {
    MemorySegment h = handle;
    if (h.address() == 0) {
      return -1;
    }
    try {
      return (long) Native.COUNT.invokeExact(h);
    } catch (Throwable t) {
      throw Native.fail(t);
    }
  }

  public Status clear() {
    return simple(Native.CLEAR);
  }

  /** Compacts the files while other threads keep using the database; params are not used. */
  public Status rebuild(Map<String, String> params) {
    return simple(Native.REBUILD, MemorySegment.NULL);
  }

  public Status rebuild() {
    return rebuild(null);
  }

  /** True when dead records take more than half of a file. */
  public boolean shouldBeRebuilt() {
    return flag(Native.SHOULD_BE_REBUILT);
  }

  /** Hands buffered data to the OS; with {@code hard}, to the device. params are not used. */
  public Status synchronize(boolean hard, Map<String, String> params) {
    MemorySegment h = handle;
    if (h.address() == 0) {
      return NOT_OPENED.clone();
    }
    try {
      return done((boolean) Native.SYNCHRONIZE.invokeExact(h, hard, MemorySegment.NULL));
    } catch (Throwable t) {
      throw Native.fail(t);
    }
  }

  public Status synchronize(boolean hard) {
    return synchronize(hard, null);
  }

  /** The database's properties (class, num_records, ...); empty when not open. */
  public Map<String, String> inspect() {
    Map<String, String> out = new LinkedHashMap<>();
    MemorySegment h = handle;
    if (h.address() == 0) {
      return out;
    }
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment num = arena.allocate(4);
      MemorySegment p = (MemorySegment) Native.INSPECT.invokeExact(h, num);
      int n = p.address() == 0 ? 0 : num.get(JAVA_INT, 0);
      for (byte[][] kv : Native.takePairs(p, n)) {
        out.put(string(kv[0]), string(kv[1]));
      }
      return out;
    } catch (Throwable t) {
      throw Native.fail(t);
    }
  }

  public boolean isWritable() {
    return flag(Native.IS_WRITABLE);
  }

  public boolean isOrdered() {
    return flag(Native.IS_ORDERED);
  }

  /**
   * Keys matching a pattern: {@code mode} is contain, containcase, begin, end, regex, edit,
   * editbin, and on ordered databases upper, upperex, lower, lowerex. At most {@code capacity}
   * keys (0: all); an empty array on failure.
   */
  public byte[][] search(String mode, byte[] pattern, int capacity) {
    MemorySegment h = handle;
    if (h.address() == 0) {
      return new byte[0][];
    }
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment num = arena.allocate(4);
      MemorySegment p = (MemorySegment) Native.SEARCH.invokeExact(h, arena.allocateFrom(mode),
          Native.copyIn(arena, pattern), pattern.length, capacity, num);
      return Native.takeStrs(p, p.address() == 0 ? 0 : num.get(JAVA_INT, 0));
    } catch (Throwable t) {
      throw Native.fail(t);
    }
  }

  public String[] search(String mode, String pattern, int capacity) {
    byte[][] keys = search(mode, utf8(pattern), capacity);
    String[] out = new String[keys.length];
    for (int i = 0; i < keys.length; i++) {
      out[i] = string(keys[i]);
    }
    return out;
  }

  /** A new iterator, on no record until first, last or a jump; release it with destruct. */
  public Iterator makeIterator() {
    MemorySegment h = handle;
    if (h.address() == 0) {
      throw new StatusException(NOT_OPENED.clone());
    }
    try {
      MemorySegment it = (MemorySegment) Native.MAKE_ITERATOR.invokeExact(h);
      if (it.address() == 0) {
        throw new StatusException(Native.last());
      }
      return new Iterator(it);
    } catch (Throwable t) {
      throw Native.fail(t);
    }
  }

  @Override
  public String toString() {
    return isOpen() ? "memstored.DBM(open)" : "memstored.DBM(unopened)";
  }

  /** Tkrzw's {@code "k=v,k=v"} parameters as a map; null or blank: empty. */
  static Map<String, String> parseParams(String params) {
    Map<String, String> out = new LinkedHashMap<>();
    if (params == null) {
      return out;
    }
    for (String field : params.split(",")) {
      int eq = field.indexOf('=');
      if (eq > 0) {
        out.put(field.substring(0, eq).trim(), field.substring(eq + 1).trim());
      }
    }
    return out;
  }

  /** SUCCESS for a true result, else this thread's last status. */
  private static Status done(boolean ok) {
    return ok ? new Status() : Native.last();
  }

  private static <T> T notOpened(Status status, T result) {
    if (status != null) {
      status.set(NOT_OPENED.getCode(), NOT_OPENED.getMessage());
    }
    return result;
  }

  /** A call taking only the handle (and NULL params) and returning success. */
  private Status simple(MethodHandle mh, MemorySegment... params) {
    MemorySegment h = handle;
    if (h.address() == 0) {
      return NOT_OPENED.clone();
    }
    try {
      return done(params.length == 0
          ? (boolean) mh.invokeExact(h)
          : (boolean) mh.invokeExact(h, params[0]));
    } catch (Throwable t) {
      throw Native.fail(t);
    }
  }

  /** A call taking only the handle and returning a flag; false when not open. */
  private boolean flag(MethodHandle mh) {
    MemorySegment h = handle;
    if (h.address() == 0) {
      return false;
    }
    try {
      return (boolean) mh.invokeExact(h);
    } catch (Throwable t) {
      throw Native.fail(t);
    }
  }
}
