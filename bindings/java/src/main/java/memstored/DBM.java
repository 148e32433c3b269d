package memstored;

import static java.lang.foreign.ValueLayout.ADDRESS;
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
 * <p>Beyond tkrzw-java: {@link #processFirst}. Calls the loaded library lacks (an older
 * libmemstored) answer NOT_IMPLEMENTED_ERROR naming the C function.
 * {@link #increment} stores decimal text, not Tkrzw's 8 big-endian bytes.
 */
public class DBM extends NativeObject {
  private static final Status NOT_OPENED = new Status(Status.PRECONDITION_ERROR, "not opened");

  /**
   * As an expected value of {@link #compareExchange}: any existing record; as a desired value:
   * leave the record as it is. Compared by identity.
   */
  public static final byte[] ANY_BYTES = new byte[0];

  /** {@link #ANY_BYTES} for the String calls. Compared by identity. */
  public static final String ANY_STRING = new String("\0");

  public DBM() {
    super("memstored_dbm", Native.OPEN, Native.CLOSE);
  }

  public boolean isOpen() {
    return opened();
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
    if (expected == ANY_BYTES || desired == ANY_BYTES) {
      // The C compare-exchange takes no ANY; its _and_get form does.
      return compareExchangeAndGet(key, expected, desired).status;
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
    return compareExchange(utf8(key), raw(expected), raw(desired));
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
    if (hasAny(exp[1]) || hasAny(des[1])) {
      return compareExchangeMultiAny(exp, des);
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
   * keys (0: all); an empty array when not open.
   *
   * @throws StatusException on failure, e.g. INVALID_ARGUMENT_ERROR for an unknown mode
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
      if (p.address() == 0 && Native.lastCode() != 0) {
        throw new StatusException(Native.last());
      }
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

  /** "memstored.DBM(class=HashDBM, path=..., count=N)", or "memstored.DBM(unopened)". */
  @Override
  public String toString() {
    if (!isOpen()) {
      return "memstored.DBM(unopened)";
    }
    String path = getFilePath();
    return "memstored.DBM(class=" + inspect().getOrDefault("class", "") + ", path="
        + Iterator.quote(path == null ? "" : path) + ", count=" + count() + ")";
  }

  /**
   * Runs the processor on the key's record, atomically: it gets the key and the value (null when
   * absent) and returns null (leave it), {@link RecordProcessor#REMOVE}, or a new value. With
   * {@code writable} false its answer is ignored. The processor's exceptions are rethrown here.
   * With {@code writable} the record's lock is held while it runs: it must not call into this
   * database.
   */
  public Status process(byte[] key, RecordProcessor proc, boolean writable) {
    return withProcessors(NativeExtra.PROCESS, "memstored_dbm_process", new RecordProcessor[] {proc},
        (h, call, arena) -> (boolean) NativeExtra.PROCESS.invokeExact(h, Native.copyIn(arena, key),
            key.length, Processors.STUB, call.arg(0), writable));
  }

  public Status process(String key, RecordProcessor proc, boolean writable) {
    return process(utf8(key), proc, writable);
  }

  /** Runs each processor on its key's record, all atomically together. */
  public Status processMulti(RecordProcessor.WithKey[] keyProcPairs, boolean writable) {
    RecordProcessor[] procs = new RecordProcessor[keyProcPairs.length];
    for (int i = 0; i < procs.length; i++) {
      procs[i] = keyProcPairs[i].processor;
    }
    return withProcessors(NativeExtra.PROCESS_MULTI, "memstored_dbm_process_multi", procs,
        (h, call, arena) -> {
          // TkrzwKeyProcPair: {key_ptr, int32 key_size, proc, proc_arg}, 32 bytes.
          MemorySegment arr = arena.allocate(32L * Math.max(1, procs.length), 8);
          for (int i = 0; i < procs.length; i++) {
            byte[] key = keyProcPairs[i].key;
            arr.set(ADDRESS, i * 32L, Native.copyIn(arena, key));
            arr.set(JAVA_INT, i * 32L + 8, key.length);
            arr.set(ADDRESS, i * 32L + 16, Processors.STUB);
            arr.set(ADDRESS, i * 32L + 24, call.arg(i));
          }
          return (boolean) NativeExtra.PROCESS_MULTI.invokeExact(h, arr, procs.length, writable);
        });
  }

  /** Runs the processor on the first record; NOT_FOUND_ERROR (not called) when empty. */
  public Status processFirst(RecordProcessor proc, boolean writable) {
    return withProcessors(NativeExtra.PROCESS_FIRST, "memstored_dbm_process_first",
        new RecordProcessor[] {proc}, (h, call, arena) -> (boolean) NativeExtra.PROCESS_FIRST
            .invokeExact(h, Processors.STUB, call.arg(0), writable));
  }

  /**
   * Runs the processor on every record, and once before and once after with key and value
   * null (Tkrzw's convention).
   */
  public Status processEach(RecordProcessor proc, boolean writable) {
    return withProcessors(NativeExtra.PROCESS_EACH, "memstored_dbm_process_each",
        new RecordProcessor[] {proc}, (h, call, arena) -> (boolean) NativeExtra.PROCESS_EACH
            .invokeExact(h, Processors.STUB, call.arg(0), writable));
  }

  /** Appends each value after the delimiter to its record (stores it when absent). */
  public Status appendMulti(Map<byte[], byte[]> records, byte[] delim) {
    byte[][][] kv = Records.of(records);
    byte[] d = delim == null ? new byte[0] : delim;
    return call(NativeExtra.APPEND_MULTI, "memstored_dbm_append_multi", h -> {
      try (Arena arena = Arena.ofConfined()) {
        return done((boolean) NativeExtra.APPEND_MULTI.invokeExact(h,
            Native.pairs(arena, kv[0], kv[1]), kv[0].length, Native.copyIn(arena, d), d.length));
      }
    });
  }

  public Status appendMulti(Map<String, String> records, String delim) {
    return appendMulti(Records.utf8(records), utf8(delim));
  }

  /**
   * As {@link #compareExchange}, and gives the value the record held before (null when absent);
   * INFEASIBLE_ERROR when the expectation failed.
   */
  public Status.And<byte[]> compareExchangeAndGet(byte[] key, byte[] expected, byte[] desired) {
    Status.And<byte[]> out = new Status.And<>(null, null);
    if (lacksAny(expected, desired)) {
      out.status = NativeExtra.missing("MEMSTORED_ANY_DATA");
      return out;
    }
    out.status = call(NativeExtra.COMPARE_EXCHANGE_AND_GET,
        "memstored_dbm_compare_exchange_and_get", h -> {
          int[] size = new int[1];
          try (Arena arena = Arena.ofConfined()) {
            MemorySegment sizeSeg = arena.allocate(JAVA_INT);
            MemorySegment p = (MemorySegment) NativeExtra.COMPARE_EXCHANGE_AND_GET.invokeExact(h,
                Native.copyIn(arena, key), key.length,
                anyOrCopy(arena, expected), expected == null ? 0 : expected.length,
                anyOrCopy(arena, desired), desired == null ? 0 : desired.length, sizeSeg);
            Status status = Native.lastCode() == 0 ? new Status() : Native.last();
            size[0] = sizeSeg.get(JAVA_INT, 0);
            out.value = Native.take(p, size[0]);
            return status;
          }
        });
    return out;
  }

  public Status.And<String> compareExchangeAndGet(String key, String expected, String desired) {
    Status.And<byte[]> r = compareExchangeAndGet(utf8(key), raw(expected), raw(desired));
    return new Status.And<>(r.status, string(r.value));
  }

  /**
   * Moves a record to a new key (with {@code copying}, copies it). NOT_FOUND_ERROR without the
   * old key; DUPLICATION_ERROR when the new key exists and {@code overwrite} is false. Atomic.
   */
  public Status rekey(byte[] oldKey, byte[] newKey, boolean overwrite, boolean copying) {
    return call(NativeExtra.REKEY, "memstored_dbm_rekey", h -> {
      try (Arena arena = Arena.ofConfined()) {
        return done((boolean) NativeExtra.REKEY.invokeExact(h, Native.copyIn(arena, oldKey),
            oldKey.length, Native.copyIn(arena, newKey), newKey.length, overwrite, copying));
      }
    });
  }

  public Status rekey(String oldKey, String newKey, boolean overwrite, boolean copying) {
    return rekey(utf8(oldKey), utf8(newKey), overwrite, copying);
  }

  /** Removes the first record and gives it as {key, value}; null (NOT_FOUND_ERROR) when empty. */
  public byte[][] popFirst(Status status) {
    byte[][][] out = new byte[1][][];
    Status s = call(NativeExtra.POP_FIRST, "memstored_dbm_pop_first", h -> {
      try (Arena arena = Arena.ofConfined()) {
        MemorySegment ptrs = arena.allocate(ADDRESS, 2);
        MemorySegment sizes = arena.allocate(JAVA_INT, 2);
        if (!(boolean) NativeExtra.POP_FIRST.invokeExact(h, ptrs, sizes,
            ptrs.asSlice(8), sizes.asSlice(4))) {
          return Native.last();
        }
        out[0] = new byte[][] {
            Native.take(ptrs.get(Native.UNBOUNDED, 0), sizes.get(JAVA_INT, 0)),
            Native.take(ptrs.get(Native.UNBOUNDED, 8), sizes.get(JAVA_INT, 4))};
        return new Status();
      }
    });
    if (status != null) {
      status.set(s.getCode(), s.getMessage());
    }
    return out[0];
  }

  public byte[][] popFirst() {
    return popFirst(null);
  }

  public String[] popFirstString(Status status) {
    byte[][] r = popFirst(status);
    return r == null ? null : new String[] {string(r[0]), string(r[1])};
  }

  public String[] popFirstString() {
    return popFirstString(null);
  }

  /**
   * Stores the value under a key made of the time ({@code wtime} seconds; negative: now), as
   * Tkrzw's queues do, so that {@link #popFirst} on an ordered database takes the oldest.
   */
  public Status pushLast(byte[] value, double wtime) {
    return call(NativeExtra.PUSH_LAST, "memstored_dbm_push_last", h -> {
      try (Arena arena = Arena.ofConfined()) {
        return done((boolean) NativeExtra.PUSH_LAST.invokeExact(h, Native.copyIn(arena, value),
            value.length, wtime));
      }
    });
  }

  public Status pushLast(String value, double wtime) {
    return pushLast(utf8(value), wtime);
  }

  /** The total size of the database's files in bytes; -1 on failure. */
  public long getFileSize() {
    long[] out = {-1};
    call(NativeExtra.GET_FILE_SIZE, "memstored_dbm_get_file_size", h -> {
      out[0] = (long) NativeExtra.GET_FILE_SIZE.invokeExact(h);
      return new Status();
    });
    return out[0];
  }

  /** The database's file path; null on failure or for an in-memory database. */
  public String getFilePath() {
    String[] out = {null};
    call(NativeExtra.GET_FILE_PATH, "memstored_dbm_get_file_path", h -> {
      MemorySegment p = (MemorySegment) NativeExtra.GET_FILE_PATH.invokeExact(h);
      out[0] = p.address() == 0 ? null : Native.takeString(p);
      return new Status();
    });
    return out[0];
  }

  /** The time of the last modification in seconds since the epoch; NaN on failure. */
  public double getTimestamp() {
    double[] out = {Double.NaN};
    call(NativeExtra.GET_TIMESTAMP, "memstored_dbm_get_timestamp", h -> {
      out[0] = (double) NativeExtra.GET_TIMESTAMP.invokeExact(h);
      return new Status();
    });
    return out[0];
  }

  /** True when the database is open and its files passed their checks. */
  public boolean isHealthy() {
    boolean[] out = {false};
    call(NativeExtra.IS_HEALTHY, "memstored_dbm_is_healthy", h -> {
      out[0] = (boolean) NativeExtra.IS_HEALTHY.invokeExact(h);
      return new Status();
    });
    return out[0];
  }

  /** Copies the database's files to {@code destPath} (a consistent snapshot). */
  public Status copyFileData(String destPath, boolean syncHard) {
    return call(NativeExtra.COPY_FILE_DATA, "memstored_dbm_copy_file_data", h -> {
      try (Arena arena = Arena.ofConfined()) {
        return done((boolean) NativeExtra.COPY_FILE_DATA.invokeExact(h,
            arena.allocateFrom(destPath), syncHard));
      }
    });
  }

  /** Stores every record into another open database. */
  public Status export(DBM destDBM) {
    MemorySegment dest = destDBM.handle;
    if (dest.address() == 0) {
      return new Status(Status.PRECONDITION_ERROR, "the destination is not opened");
    }
    return call(NativeExtra.EXPORT, "memstored_dbm_export",
        h -> done((boolean) NativeExtra.EXPORT.invokeExact(h, dest)));
  }

  /** Writes every record to the file in Tkrzw's flat-record format. */
  public Status exportToFlatRecords(File destFile) {
    return withFile(NativeExtra.EXPORT_TO_FLAT_RECORDS, "memstored_dbm_export_to_flat_records",
        destFile);
  }

  /** Stores every record of a flat-record file (as {@link #exportToFlatRecords} writes). */
  public Status importFromFlatRecords(File srcFile) {
    return withFile(NativeExtra.IMPORT_FROM_FLAT_RECORDS, "memstored_dbm_import_from_flat_records",
        srcFile);
  }

  /** Writes every key as a line of text to the file. */
  public Status exportKeysAsLines(File destFile) {
    return withFile(NativeExtra.EXPORT_KEYS_AS_LINES, "memstored_dbm_export_keys_as_lines",
        destFile);
  }

  /**
   * Rebuilds a healthy database at {@code newFilePath} from the readable records of the one at
   * {@code oldFilePath}. {@code className} (Tkrzw's, e.g. "HashDBM"; empty: by the extension),
   * {@code endOffset} and {@code cipherKey} are as Tkrzw's.
   */
  public static Status restoreDatabase(String oldFilePath, String newFilePath, String className,
      long endOffset, byte[] cipherKey) {
    if (NativeExtra.RESTORE_DATABASE == null) {
      return NativeExtra.missing("memstored_dbm_restore_database");
    }
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment key = MemorySegment.NULL;
      if (cipherKey != null) {
        key = arena.allocate(cipherKey.length + 1L);
        MemorySegment.copy(cipherKey, 0, key, java.lang.foreign.ValueLayout.JAVA_BYTE, 0,
            cipherKey.length);
      }
      return done((boolean) NativeExtra.RESTORE_DATABASE.invokeExact(
          arena.allocateFrom(oldFilePath), arena.allocateFrom(newFilePath),
          Native.cString(arena, className == null ? "" : className), endOffset, key));
    } catch (Throwable t) {
      throw Native.fail(t);
    }
  }

  private interface ProcessorCall {
    boolean run(MemorySegment h, Processors.Call call, Arena arena) throws Throwable;
  }

  /** A call taking record processors; their exceptions are rethrown after it returns. */
  private Status withProcessors(MethodHandle mh, String function, RecordProcessor[] procs,
      ProcessorCall body) {
    return call(mh, function, h -> {
      try (Processors.Call call = new Processors.Call(procs); Arena arena = Arena.ofConfined()) {
        return done(body.run(h, call, arena));
      }
    });
  }

  private Status withFile(MethodHandle mh, String function, File file) {
    MemorySegment f = file.handle();
    if (f.address() == 0) {
      return new Status(Status.PRECONDITION_ERROR, "the file is not opened");
    }
    return call(mh, function, h -> done((boolean) mh.invokeExact(h, f)));
  }

  /** A String value as bytes, {@link #ANY_STRING} as {@link #ANY_BYTES}. */
  static byte[] raw(String value) {
    return value == ANY_STRING ? ANY_BYTES : utf8(value);
  }

  private static MemorySegment anyOrCopy(Arena arena, byte[] value) {
    return value == ANY_BYTES ? NativeExtra.ANY_DATA : Native.copyIn(arena, value);
  }

  /**
   * {@link #compareExchangeMulti} with ANY values, which the C call does not take: one atomic
   * processMulti (it holds every key's lock throughout) whose first processors check the
   * expectations and whose last ones store the desired values only when all of them held.
   */
  private Status compareExchangeMultiAny(byte[][][] exp, byte[][][] des) {
    int n = exp[0].length;
    boolean[] held = {true};
    RecordProcessor.WithKey[] ops = new RecordProcessor.WithKey[n + des[0].length];
    for (int i = 0; i < n; i++) {
      byte[] want = exp[1][i];
      ops[i] = new RecordProcessor.WithKey(exp[0][i], (k, v) -> {
        boolean ok = want == ANY_BYTES ? v != null
            : want == null ? v == null : v != null && java.util.Arrays.equals(v, want);
        held[0] &= ok;
        return null;
      });
    }
    for (int i = 0; i < des[0].length; i++) {
      byte[] put = des[1][i];
      ops[n + i] = new RecordProcessor.WithKey(des[0][i], (k, v) ->
          !held[0] || put == ANY_BYTES ? null : put == null ? RecordProcessor.REMOVE : put);
    }
    Status s = processMulti(ops, true);
    if (s.isOK() && !held[0]) {
      return new Status(Status.INFEASIBLE_ERROR, "the records do not hold the expected values");
    }
    return s;
  }

  private static boolean hasAny(byte[][] values) {
    for (byte[] v : values) {
      if (v == ANY_BYTES) {
        return true;
      }
    }
    return false;
  }

  /** True when a value is ANY_BYTES and the library has no ANY_DATA to pass for it. */
  static boolean lacksAny(byte[]... values) {
    if (NativeExtra.ANY_DATA.address() != 0) {
      return false;
    }
    for (byte[] v : values) {
      if (v == ANY_BYTES) {
        return true;
      }
    }
    return false;
  }

  /** The parameters as the C API's {@code "k=v,k=v"}; null: "". */
  static String joinParams(Map<String, String> params) {
    StringBuilder joined = new StringBuilder();
    if (params != null) {
      for (Map.Entry<String, String> e : params.entrySet()) {
        joined.append(joined.isEmpty() ? "" : ",").append(e.getKey()).append('=').append(e.getValue());
      }
    }
    return joined.toString();
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
