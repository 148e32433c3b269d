package memstored;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.Map;

/**
 * What {@link DBM}, {@link File} and {@link Index} share: an object of the C API behind an opaque handle,
 * opened with a path and params, used by many threads, closed once. The handle is volatile so
 * that a closed one is seen by every thread.
 */
abstract class NativeObject {
  /** The C handle; NULL while not open. Read once by each call (DBM's hot paths read it here). */
  volatile MemorySegment handle = MemorySegment.NULL;
  /** The C API's prefix of this object's calls, e.g. "memstored_file". */
  private final String prefix;
  private final MethodHandle openCall;
  private final MethodHandle closeCall;

  NativeObject(String prefix, MethodHandle openCall, MethodHandle closeCall) {
    this.prefix = prefix;
    this.openCall = openCall;
    this.closeCall = closeCall;
  }

  /** Closes the object if it is open. */
  public void destruct() {
    if (opened()) {
      close();
    }
  }

  /**
   * Opens.
   *
   * @param params parameters such as {@code truncate=true}, {@code num_buckets=1000}; null: none
   */
  public Status open(String path, boolean writable, Map<String, String> params) {
    if (opened()) {
      return new Status(Status.PRECONDITION_ERROR, "opened already");
    }
    if (openCall == null) {
      return NativeExtra.missing(prefix + "_open");
    }
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment h = (MemorySegment) openCall.invokeExact(
          arena.allocateFrom(path), writable, arena.allocateFrom(DBM.joinParams(params)));
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
    return open(path, writable, DBM.parseParams(params));
  }

  public Status open(String path, boolean writable) {
    return open(path, writable, (Map<String, String>) null);
  }

  /** Closes; the handle is released even when closing reports an error. */
  public Status close() {
    MemorySegment h = handle;
    if (h.address() == 0) {
      return notOpened();
    }
    handle = MemorySegment.NULL;
    try {
      return done((boolean) closeCall.invokeExact(h));
    } catch (Throwable t) {
      throw Native.fail(t);
    }
  }

  final boolean opened() {
    return handle.address() != 0;
  }

  /** The handle, for the classes whose calls take one (iterators, AsyncDBM, DBM's file calls). */
  final MemorySegment handle() {
    return handle;
  }

  interface Call {
    Status run(MemorySegment h) throws Throwable;
  }

  /**
   * Runs {@code body} on the open handle: PRECONDITION_ERROR when not open, NOT_IMPLEMENTED_ERROR
   * naming {@code function} when the library lacks it.
   */
  final Status call(MethodHandle mh, String function, Call body) {
    MemorySegment h = handle;
    if (h.address() == 0) {
      return notOpened();
    }
    if (mh == null) {
      return NativeExtra.missing(function);
    }
    try {
      return body.run(h);
    } catch (Throwable t) {
      throw Native.fail(t);
    }
  }

  /** SUCCESS for a true result, else this thread's last status. */
  static Status done(boolean ok) {
    return ok ? new Status() : Native.last();
  }

  static Status notOpened() {
    return new Status(Status.PRECONDITION_ERROR, "not opened");
  }
}
