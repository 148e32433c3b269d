package memstored;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Runs {@link RecordProcessor}s as the C API's record-processor callbacks.
 *
 * <p>One upcall stub serves every call: the callback's opaque argument is the number of a
 * {@link Call} registered here for the duration of the C call, so no stub is made per call.
 * A processor's exception must not cross the C frames (the JVM would abort), so it is kept and
 * rethrown by {@link Call#close} once the C call has returned; the record is left as it is.
 */
final class Processors {
  private Processors() {}

  private static final ConcurrentHashMap<Long, Call> CALLS = new ConcurrentHashMap<>();
  private static final AtomicLong NEXT = new AtomicLong(1);
  /** The low bits of a callback argument: the processor's index within its call. */
  static final int INDEX_BITS = 24;

  /** The C function pointer of {@link #dispatch}. */
  static final MemorySegment STUB = stub();

  private static MemorySegment stub() {
    try {
      var mh = MethodHandles.lookup().findStatic(Processors.class, "dispatch",
          MethodType.methodType(MemorySegment.class, MemorySegment.class, MemorySegment.class,
              int.class, MemorySegment.class, int.class, MemorySegment.class));
      FunctionDescriptor fd = FunctionDescriptor.of(ADDRESS, ADDRESS, Native.UNBOUNDED, JAVA_INT,
          Native.UNBOUNDED, JAVA_INT, Native.UNBOUNDED);
      return Linker.nativeLinker().upcallStub(mh, fd, Arena.global());
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }

  /** One C call's processors, registered while it runs. */
  static final class Call implements AutoCloseable {
    private final long id = NEXT.getAndIncrement();
    private final RecordProcessor[] procs;
    /** The last value handed to C, kept reachable until C has copied it (the next callback). */
    private MemorySegment lastValue;
    private Throwable failure;

    Call(RecordProcessor... procs) {
      this.procs = procs;
      CALLS.put(id, this);
    }

    /** The callback argument that selects the {@code index}th processor of this call. */
    MemorySegment arg(int index) {
      return MemorySegment.ofAddress((id << INDEX_BITS) | index);
    }

    /** True when a processor threw: the C call's result is then not the caller's answer. */
    boolean failed() {
      return failure != null;
    }

    /** Unregisters the call and rethrows a processor's exception. */
    @Override
    public void close() {
      CALLS.remove(id);
      Throwable t = failure;
      if (t instanceof RuntimeException r) {
        throw r;
      }
      if (t instanceof Error e) {
        throw e;
      }
      if (t != null) {
        throw new IllegalStateException(t);
      }
    }

    private synchronized MemorySegment run(int index, MemorySegment key, int keySize,
        MemorySegment value, int valueSize) {
      if (failure != null) {
        return NativeExtra.REC_PROC_NOOP;
      }
      try {
        byte[] k = key.address() == 0 ? null : Native.copy(key, keySize);
        byte[] v = value.address() == 0 || valueSize < 0 ? null : Native.copy(value, valueSize);
        byte[] out = procs[index].process(k, v);
        if (out == null) {
          return NativeExtra.REC_PROC_NOOP;
        }
        if (out == RecordProcessor.REMOVE) {
          return NativeExtra.REC_PROC_REMOVE;
        }
        // A slice keeps an empty value's address non-NULL (NULL would read as "no record").
        MemorySegment seg = Arena.ofAuto().allocate(Math.max(1, out.length)).asSlice(0, out.length);
        MemorySegment.copy(out, 0, seg, JAVA_BYTE, 0, out.length);
        lastValue = seg;
        return seg;
      } catch (Throwable t) {
        failure = t;
        return NativeExtra.REC_PROC_NOOP;
      }
    }
  }

  /** The upcall: finds the call and runs its processor; the new value's size goes out. */
  private static MemorySegment dispatch(MemorySegment arg, MemorySegment key, int keySize,
      MemorySegment value, int valueSize, MemorySegment newSize) {
    long bits = arg.address();
    Call call = CALLS.get(bits >>> INDEX_BITS);
    if (call == null) {
      return NativeExtra.REC_PROC_NOOP;
    }
    MemorySegment out = call.run((int) (bits & ((1L << INDEX_BITS) - 1)), key, keySize, value, valueSize);
    if (newSize.address() != 0) {
      newSize.set(JAVA_INT, 0, out == NativeExtra.REC_PROC_NOOP || out == NativeExtra.REC_PROC_REMOVE
          ? 0 : (int) out.byteSize());
    }
    return out;
  }
}
