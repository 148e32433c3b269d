package memstored;

import static memstored.Native.heap;
import static memstored.Native.string;
import static memstored.Native.utf8;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * An iterator over a database's records, as tkrzw-java's: made by {@link DBM#makeIterator()},
 * on no record until {@link #first()}, {@link #last()} or a jump, released by
 * {@link #destruct()}. One iterator is for one thread at a time; many iterators may run at once.
 * A closed database's iterators answer PRECONDITION_ERROR (as Tkrzw's are invalidated by Close).
 */
public class Iterator {
  private MemorySegment handle;

  Iterator(MemorySegment handle) {
    this.handle = handle;
  }

  /** Releases the iterator; later calls fail with PRECONDITION_ERROR. */
  public void destruct() {
    MemorySegment h = handle;
    handle = MemorySegment.NULL;
    try {
      Native.ITER_FREE.invokeExact(h);
    } catch (Throwable t) {
      throw Native.fail(t);
    }
  }

  /** Moves to the first record; SUCCESS on an empty database too. */
  public Status first() {
    return move(Native.ITER_FIRST);
  }

  /** Moves to the last record (ordered databases; NOT_IMPLEMENTED_ERROR on hash ones). */
  public Status last() {
    return move(Native.ITER_LAST);
  }

  /** Moves to the key's record; on ordered databases to the first key at or after it. */
  public Status jump(byte[] key) {
    if (handle.address() == 0) {
      return destructed();
    }
    try {
      return done((boolean) Native.ITER_JUMP.invokeExact(handle, heap(key), key.length));
    } catch (Throwable t) {
      throw Native.fail(t);
    }
  }

  public Status jump(String key) {
    return jump(utf8(key));
  }

  /** Moves to the last record before the key ({@code inclusive}: at or before). */
  public Status jumpLower(byte[] key, boolean inclusive) {
    return jumpBound(Native.ITER_JUMP_LOWER, key, inclusive);
  }

  public Status jumpLower(String key, boolean inclusive) {
    return jumpLower(utf8(key), inclusive);
  }

  /** Moves to the first record after the key ({@code inclusive}: at or after). */
  public Status jumpUpper(byte[] key, boolean inclusive) {
    return jumpBound(Native.ITER_JUMP_UPPER, key, inclusive);
  }

  public Status jumpUpper(String key, boolean inclusive) {
    return jumpUpper(utf8(key), inclusive);
  }

  /** Moves to the next record; past the last one the iterator is on no record. */
  public Status next() {
    return move(Native.ITER_NEXT);
  }

  /** Moves to the previous record (ordered databases). */
  public Status previous() {
    return move(Native.ITER_PREVIOUS);
  }

  /** The current record as {key, value}, or null (NOT_FOUND_ERROR when on no record). */
  public byte[][] get(Status status) {
    return record(Native.ITER_GET, status);
  }

  public byte[][] get() {
    return get(null);
  }

  public String[] getString(Status status) {
    return strings(get(status));
  }

  public String[] getString() {
    return getString(null);
  }

  /** The current key, or null. */
  public byte[] getKey() {
    return part(Native.ITER_GET_KEY);
  }

  public String getKeyString() {
    return string(getKey());
  }

  /** The current value, or null. */
  public byte[] getValue() {
    return part(Native.ITER_GET_VALUE);
  }

  public String getValueString() {
    return string(getValue());
  }

  /** Replaces the current record's value. */
  public Status set(byte[] value) {
    if (handle.address() == 0) {
      return destructed();
    }
    try {
      return done((boolean) Native.ITER_SET.invokeExact(handle, heap(value), value.length));
    } catch (Throwable t) {
      throw Native.fail(t);
    }
  }

  public Status set(String value) {
    return set(utf8(value));
  }

  /** Removes the current record and moves to the next one. */
  public Status remove() {
    return move(Native.ITER_REMOVE);
  }

  /** The current record as {key, value}, then moves on; null (NOT_FOUND_ERROR) past the end. */
  public byte[][] step(Status status) {
    return record(Native.ITER_STEP, status);
  }

  public byte[][] step() {
    return step(null);
  }

  public String[] stepString(Status status) {
    return strings(step(status));
  }

  public String[] stepString() {
    return stepString(null);
  }

  /** "memstored.Iterator(key=...)" with the current key, "(unlocated)" when on none. */
  @Override
  public String toString() {
    if (handle.address() == 0) {
      return "memstored.Iterator(destructed)";
    }
    byte[] key = getKey();
    return "memstored.Iterator(key=" + (key == null ? "(unlocated)" : quote(string(key))) + ")";
  }

  /** The text in double quotes, with quotes, backslashes and control characters escaped. */
  static String quote(String text) {
    StringBuilder out = new StringBuilder("\"");
    text.codePoints().forEach(c -> {
      if (c == '"' || c == '\\') {
        out.append('\\').appendCodePoint(c);
      } else if (c < 0x20 || c == 0x7f) {
        out.append(String.format("\\x%02x", c));
      } else {
        out.appendCodePoint(c);
      }
    });
    return out.append('"').toString();
  }

  private static Status done(boolean ok) {
    return ok ? new Status() : Native.last();
  }

  private static Status destructed() {
    return new Status(Status.PRECONDITION_ERROR, "the iterator is destructed");
  }

  private Status move(MethodHandle mh) {
    if (handle.address() == 0) {
      return destructed();
    }
    try {
      return done((boolean) mh.invokeExact(handle));
    } catch (Throwable t) {
      throw Native.fail(t);
    }
  }

  private Status jumpBound(MethodHandle mh, byte[] key, boolean inclusive) {
    if (handle.address() == 0) {
      return destructed();
    }
    try {
      return done((boolean) mh.invokeExact(handle, heap(key), key.length, inclusive));
    } catch (Throwable t) {
      throw Native.fail(t);
    }
  }

  /** iter_get or iter_step: the key and value come back through out-pointers. */
  private byte[][] record(MethodHandle mh, Status status) {
    if (handle.address() == 0) {
      if (status != null) {
        Status d = destructed();
        status.set(d.getCode(), d.getMessage());
      }
      return null;
    }
    long[] ptrs = new long[2];
    int[] sizes = new int[2];
    MemorySegment p = MemorySegment.ofArray(ptrs);
    MemorySegment s = MemorySegment.ofArray(sizes);
    try {
      boolean ok = (boolean) mh.invokeExact(handle, p.asSlice(0, 8), s.asSlice(0, 4),
          p.asSlice(8, 8), s.asSlice(4, 4));
      if (!ok) {
        Native.fillLast(status);
        return null;
      }
      if (status != null) {
        status.set(Status.SUCCESS, "");
      }
      return new byte[][] {
          Native.take(p.get(Native.UNBOUNDED, 0), sizes[0]),
          Native.take(p.get(Native.UNBOUNDED, 8), sizes[1])};
    } catch (Throwable t) {
      throw Native.fail(t);
    }
  }

  /** iter_get_key or iter_get_value. */
  private byte[] part(MethodHandle mh) {
    if (handle.address() == 0) {
      return null;
    }
    int[] size = new int[1];
    try {
      MemorySegment ptr = (MemorySegment) mh.invokeExact(handle, MemorySegment.ofArray(size));
      return Native.take(ptr, size[0]);
    } catch (Throwable t) {
      throw Native.fail(t);
    }
  }

  private static String[] strings(byte[][] record) {
    return record == null ? null : new String[] {string(record[0]), string(record[1])};
  }
}
