package memstored;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static memstored.Native.string;
import static memstored.Native.utf8;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * An iterator over an {@link Index}'s pairs in order, as tkrzw-java's {@code IndexIterator}:
 * the moves report nothing; {@link #get} gives null when on no pair. Release it with
 * {@link #destruct}.
 */
public class IndexIterator {
  private MemorySegment handle;

  IndexIterator(MemorySegment handle) {
    this.handle = handle;
  }

  /** Releases the iterator; later moves do nothing and get gives null. */
  public void destruct() {
    MemorySegment h = handle;
    handle = MemorySegment.NULL;
    if (h.address() != 0) {
      move(NativeExtra.INDEX_ITER_FREE, h);
    }
  }

  public void first() {
    move(NativeExtra.INDEX_ITER_FIRST, handle);
  }

  public void last() {
    move(NativeExtra.INDEX_ITER_LAST, handle);
  }

  /** Moves to the first pair at or after (key, value). */
  public void jump(byte[] key, byte[] value) {
    if (handle.address() == 0) {
      return;
    }
    try (Arena arena = Arena.ofConfined()) {
      NativeExtra.INDEX_ITER_JUMP.invokeExact(handle, Native.copyIn(arena, key), key.length,
          Native.copyIn(arena, value), value.length);
    } catch (Throwable t) {
      throw Native.fail(t);
    }
  }

  public void jump(String key, String value) {
    jump(utf8(key), utf8(value));
  }

  public void next() {
    move(NativeExtra.INDEX_ITER_NEXT, handle);
  }

  public void previous() {
    move(NativeExtra.INDEX_ITER_PREVIOUS, handle);
  }

  /** The current pair as {key, value}, or null. */
  public byte[][] get() {
    if (handle.address() == 0) {
      return null;
    }
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment ptrs = arena.allocate(ADDRESS, 2);
      MemorySegment sizes = arena.allocate(JAVA_INT, 2);
      if (!(boolean) NativeExtra.INDEX_ITER_GET.invokeExact(handle, ptrs, sizes,
          ptrs.asSlice(8), sizes.asSlice(4))) {
        return null;
      }
      return new byte[][] {
          Native.take(ptrs.get(Native.UNBOUNDED, 0), sizes.get(JAVA_INT, 0)),
          Native.take(ptrs.get(Native.UNBOUNDED, 8), sizes.get(JAVA_INT, 4))};
    } catch (Throwable t) {
      throw Native.fail(t);
    }
  }

  public String[] getString() {
    byte[][] r = get();
    return r == null ? null : new String[] {string(r[0]), string(r[1])};
  }

  /** "memstored.IndexIterator(key=..., value=...)", "(unlocated)" when on no pair. */
  @Override
  public String toString() {
    if (handle.address() == 0) {
      return "memstored.IndexIterator(destructed)";
    }
    String[] r = getString();
    return "memstored.IndexIterator(" + (r == null ? "(unlocated)"
        : "key=" + Iterator.quote(r[0]) + ", value=" + Iterator.quote(r[1])) + ")";
  }

  private static void move(MethodHandle mh, MemorySegment h) {
    if (h.address() == 0) {
      return;
    }
    try {
      mh.invokeExact(h);
    } catch (Throwable t) {
      throw Native.fail(t);
    }
  }
}
