package memstored;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static memstored.Native.string;
import static memstored.Native.utf8;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A plain file, as tkrzw-java's {@code File}: positional reads and writes, appends, and the
 * target of {@link DBM#exportToFlatRecords} and {@link DBM#exportKeysAsLines}. Many threads may
 * use one open file.
 */
public class File extends NativeObject {
  public File() {
    super("memstored_file", NativeExtra.FILE_OPEN, NativeExtra.FILE_CLOSE);
  }

  /** Reads {@code size} bytes at {@code off} into {@code buf}; INFEASIBLE_ERROR past the end. */
  public Status read(long off, byte[] buf, long size) {
    if (size < 0 || size > buf.length) {
      return new Status(Status.INVALID_ARGUMENT_ERROR, "size out of the buffer");
    }
    return call(NativeExtra.FILE_READ, "memstored_file_read", h -> {
      try (Arena arena = Arena.ofConfined()) {
        MemorySegment seg = arena.allocate(Math.max(1, size));
        if (!(boolean) NativeExtra.FILE_READ.invokeExact(h, off, seg, size)) {
          return Native.last();
        }
        MemorySegment.copy(seg, JAVA_BYTE, 0, buf, 0, (int) size);
        return new Status();
      }
    });
  }

  /** The {@code size} bytes at {@code off}, or null (status set when given). */
  public byte[] read(long off, long size, Status status) {
    if (size < 0 || size > Integer.MAX_VALUE) {
      return fill(status, new Status(Status.INVALID_ARGUMENT_ERROR, "invalid size"));
    }
    byte[] buf = new byte[(int) size];
    Status s = read(off, buf, size);
    return s.isOK() ? fill(status, s, buf) : fill(status, s);
  }

  public byte[] read(long off, long size) {
    return read(off, size, null);
  }

  public String readString(long off, long size, Status status) {
    return string(read(off, size, status));
  }

  public String readString(long off, long size) {
    return readString(off, size, null);
  }

  /** Writes the first {@code size} bytes of {@code buf} at {@code off}. */
  public Status write(long off, byte[] buf, long size) {
    if (size < 0 || size > buf.length) {
      return new Status(Status.INVALID_ARGUMENT_ERROR, "size out of the buffer");
    }
    return call(NativeExtra.FILE_WRITE, "memstored_file_write", h -> {
      try (Arena arena = Arena.ofConfined()) {
        return done((boolean) NativeExtra.FILE_WRITE.invokeExact(h, off,
            copy(arena, buf, size), size));
      }
    });
  }

  public Status write(long off, byte[] buf) {
    return write(off, buf, buf.length);
  }

  public Status write(long off, String str) {
    return write(off, utf8(str));
  }

  /** Appends the first {@code size} bytes of {@code buf}; the offset written at, or -1. */
  public long append(byte[] buf, long size, Status status) {
    long[] at = {-1};
    Status s = size < 0 || size > buf.length
        ? new Status(Status.INVALID_ARGUMENT_ERROR, "size out of the buffer")
        : call(NativeExtra.FILE_APPEND, "memstored_file_append", h -> {
          try (Arena arena = Arena.ofConfined()) {
            MemorySegment off = arena.allocate(JAVA_LONG);
            if (!(boolean) NativeExtra.FILE_APPEND.invokeExact(h, copy(arena, buf, size), size,
                off)) {
              return Native.last();
            }
            at[0] = off.get(JAVA_LONG, 0);
            return new Status();
          }
        });
    fill(status, s);
    return at[0];
  }

  public long append(byte[] buf) {
    return append(buf, buf.length, null);
  }

  public long append(String str) {
    return append(utf8(str));
  }

  public Status truncate(long size) {
    return call(NativeExtra.FILE_TRUNCATE, "memstored_file_truncate",
        h -> done((boolean) NativeExtra.FILE_TRUNCATE.invokeExact(h, size)));
  }

  /** Hands written data to the OS; with {@code hard}, to the device ({@code size} 0: all). */
  public Status synchronize(boolean hard, long off, long size) {
    return call(NativeExtra.FILE_SYNCHRONIZE, "memstored_file_synchronize",
        h -> done((boolean) NativeExtra.FILE_SYNCHRONIZE.invokeExact(h, hard, off, size)));
  }

  public Status synchronize(boolean hard) {
    return synchronize(hard, 0, 0);
  }

  /** The file's size in bytes, or -1. */
  public long getSize() {
    long[] out = {-1};
    call(NativeExtra.FILE_GET_SIZE, "memstored_file_get_size", h -> {
      out[0] = (long) NativeExtra.FILE_GET_SIZE.invokeExact(h);
      return new Status();
    });
    return out[0];
  }

  /** The file's path, or null. */
  public String getPath() {
    String[] out = {null};
    call(NativeExtra.FILE_GET_PATH, "memstored_file_get_path", h -> {
      MemorySegment p = (MemorySegment) NativeExtra.FILE_GET_PATH.invokeExact(h);
      out[0] = p.address() == 0 ? null : Native.takeString(p);
      return new Status();
    });
    return out[0];
  }

  /**
   * Lines matching a pattern, with {@link DBM#search}'s modes.
   *
   * @throws StatusException on failure, e.g. INVALID_ARGUMENT_ERROR for an unknown mode
   */
  public byte[][] search(String mode, byte[] pattern, int capacity) {
    byte[][][] out = {new byte[0][]};
    Status s = call(NativeExtra.FILE_SEARCH, "memstored_file_search", h -> {
      try (Arena arena = Arena.ofConfined()) {
        MemorySegment num = arena.allocate(JAVA_INT);
        MemorySegment p = (MemorySegment) NativeExtra.FILE_SEARCH.invokeExact(h,
            arena.allocateFrom(mode), Native.copyIn(arena, pattern), pattern.length, capacity, num);
        if (p.address() == 0 && Native.lastCode() != 0) {
          return Native.last();
        }
        out[0] = Native.takeStrs(p, p.address() == 0 ? 0 : num.get(JAVA_INT, 0));
        return new Status();
      }
    });
    if (!s.isOK()) {
      throw new StatusException(s);
    }
    return out[0];
  }

  public String[] search(String mode, String pattern, int capacity) {
    byte[][] lines = search(mode, utf8(pattern), capacity);
    String[] out = new String[lines.length];
    for (int i = 0; i < lines.length; i++) {
      out[i] = string(lines[i]);
    }
    return out;
  }

  /** "memstored.File(path=..., size=N)", or "memstored.File(unopened)". */
  @Override
  public String toString() {
    if (!opened()) {
      return "memstored.File(unopened)";
    }
    String path = getPath();
    return "memstored.File(path=" + Iterator.quote(path == null ? "" : path) + ", size="
        + getSize() + ")";
  }


  private static MemorySegment copy(Arena arena, byte[] buf, long size) {
    MemorySegment seg = arena.allocate(Math.max(1, size));
    MemorySegment.copy(buf, 0, seg, JAVA_BYTE, 0, (int) size);
    return seg;
  }



  private static byte[] fill(Status status, Status s) {
    return fill(status, s, null);
  }

  private static byte[] fill(Status status, Status s, byte[] result) {
    if (status != null) {
      status.set(s.getCode(), s.getMessage());
    }
    return result;
  }
}
