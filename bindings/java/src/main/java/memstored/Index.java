package memstored;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static memstored.Native.string;
import static memstored.Native.utf8;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * A secondary index, as tkrzw-java's {@code Index}: an ordered set of (key, value) pairs, where
 * one key may have many values. Many threads may use one open index.
 */
public class Index extends NativeObject {
  public Index() {
    super("memstored_index", NativeExtra.INDEX_OPEN, NativeExtra.INDEX_CLOSE);
  }

  /** True when the pair is in the index. */
  public boolean contains(byte[] key, byte[] value) {
    // The C call answers by its result alone (an absent pair is no error).
    return call(NativeExtra.INDEX_CHECK, "memstored_index_check", h -> {
      try (Arena arena = Arena.ofConfined()) {
        boolean found = (boolean) NativeExtra.INDEX_CHECK.invokeExact(h,
            Native.copyIn(arena, key), key.length, Native.copyIn(arena, value), value.length);
        return found ? new Status() : new Status(Status.NOT_FOUND_ERROR);
      }
    }).isOK();
  }

  public boolean contains(String key, String value) {
    return contains(utf8(key), utf8(value));
  }

  /** The values of the key in order, at most {@code max} (0: all); empty on failure. */
  public byte[][] getValues(byte[] key, int max) {
    byte[][][] out = {new byte[0][]};
    call(NativeExtra.INDEX_GET_VALUES, "memstored_index_get_values", h -> {
      try (Arena arena = Arena.ofConfined()) {
        MemorySegment num = arena.allocate(JAVA_INT);
        MemorySegment p = (MemorySegment) NativeExtra.INDEX_GET_VALUES.invokeExact(h,
            Native.copyIn(arena, key), key.length, max, num);
        out[0] = Native.takeStrs(p, p.address() == 0 ? 0 : num.get(JAVA_INT, 0));
        return new Status();
      }
    });
    return out[0];
  }

  public String[] getValues(String key, int max) {
    byte[][] values = getValues(utf8(key), max);
    String[] out = new String[values.length];
    for (int i = 0; i < values.length; i++) {
      out[i] = string(values[i]);
    }
    return out;
  }

  /** Adds the pair (a no-op when present). */
  public Status add(byte[] key, byte[] value) {
    return pair(NativeExtra.INDEX_ADD, "memstored_index_add", key, value);
  }

  public Status add(String key, String value) {
    return add(utf8(key), utf8(value));
  }

  /** Removes the pair; NOT_FOUND_ERROR when absent. */
  public Status remove(byte[] key, byte[] value) {
    return pair(NativeExtra.INDEX_REMOVE, "memstored_index_remove", key, value);
  }

  public Status remove(String key, String value) {
    return remove(utf8(key), utf8(value));
  }

  /** The number of pairs, or -1. */
  public long count() {
    long[] out = {-1};
    call(NativeExtra.INDEX_COUNT, "memstored_index_count", h -> {
      out[0] = (int) NativeExtra.INDEX_COUNT.invokeExact(h);
      return new Status();
    });
    return out[0];
  }

  /** The index's file path; "" on failure. */
  public String getFilePath() {
    String[] out = {""};
    call(NativeExtra.INDEX_GET_FILE_PATH, "memstored_index_get_file_path", h -> {
      MemorySegment p = (MemorySegment) NativeExtra.INDEX_GET_FILE_PATH.invokeExact(h);
      out[0] = p.address() == 0 ? "" : Native.takeString(p);
      return new Status();
    });
    return out[0];
  }

  public Status clear() {
    return call(NativeExtra.INDEX_CLEAR, "memstored_index_clear",
        h -> done((boolean) NativeExtra.INDEX_CLEAR.invokeExact(h)));
  }

  public Status rebuild() {
    return call(NativeExtra.INDEX_REBUILD, "memstored_index_rebuild",
        h -> done((boolean) NativeExtra.INDEX_REBUILD.invokeExact(h)));
  }

  public Status synchronize(boolean hard) {
    return call(NativeExtra.INDEX_SYNCHRONIZE, "memstored_index_synchronize",
        h -> done((boolean) NativeExtra.INDEX_SYNCHRONIZE.invokeExact(h, hard)));
  }

  public boolean isOpen() {
    return opened();
  }

  public boolean isWritable() {
    boolean[] out = {false};
    call(NativeExtra.INDEX_IS_WRITABLE, "memstored_index_is_writable", h -> {
      out[0] = (boolean) NativeExtra.INDEX_IS_WRITABLE.invokeExact(h);
      return new Status();
    });
    return out[0];
  }

  /** A new iterator, on no pair until first, last or jump; release it with destruct. */
  public IndexIterator makeIterator() {
    MemorySegment[] it = {MemorySegment.NULL};
    Status s = call(NativeExtra.INDEX_MAKE_ITERATOR, "memstored_index_make_iterator", h -> {
      it[0] = (MemorySegment) NativeExtra.INDEX_MAKE_ITERATOR.invokeExact(h);
      return it[0].address() == 0 ? Native.last() : new Status();
    });
    if (!s.isOK()) {
      throw new StatusException(s);
    }
    return new IndexIterator(it[0]);
  }

  /** "memstored.Index(path=..., count=N)", or "memstored.Index(unopened)". */
  @Override
  public String toString() {
    if (!opened()) {
      return "memstored.Index(unopened)";
    }
    return "memstored.Index(path=" + Iterator.quote(getFilePath()) + ", count=" + count() + ")";
  }

  /** check, add or remove: (index, key, key size, value, value size) -> bool. */
  private Status pair(MethodHandle mh, String function, byte[] key, byte[] value) {
    return call(mh, function, h -> {
      try (Arena arena = Arena.ofConfined()) {
        return done((boolean) mh.invokeExact(h, Native.copyIn(arena, key), key.length,
            Native.copyIn(arena, value), value.length));
      }
    });
  }

}
