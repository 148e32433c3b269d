package memstored;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.io.IOException;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;

/**
 * tkrzw-java's {@code Utility}: library constants and helper functions, computed in Java (the
 * hashes give the numbers Tkrzw's {@code PrimaryHash} and {@code SecondaryHash} give, so that a
 * program that shards or buckets by them keeps its layout).
 */
public final class Utility {
  private Utility() {}

  /** The binding's version. */
  public static final String VERSION = "0.1.0";

  /** The operating system's name, as the JVM reports it ("Linux" on Linux). */
  public static final String OS_NAME = System.getProperty("os.name", "unknown");

  /** The memory page size in bytes, from the C library's {@code getpagesize}. */
  public static final int PAGE_SIZE = pageSize();

  private static int pageSize() {
    Linker linker = Linker.nativeLinker();
    return linker.defaultLookup().find("getpagesize").map(sym -> {
      MethodHandle mh = linker.downcallHandle(sym, FunctionDescriptor.of(JAVA_INT));
      try {
        return (int) mh.invokeExact();
      } catch (Throwable t) {
        return 4096;
      }
    }).orElse(4096);
  }

  /**
   * Parses {@code "k=v,k=v"}; fields without {@code =} are skipped, and only the first {@code =}
   * splits a field.
   */
  public static HashMap<String, String> parseParams(String str) {
    HashMap<String, String> params = new HashMap<>();
    if (str == null) {
      return params;
    }
    for (String field : str.split(",")) {
      int eq = field.indexOf('=');
      if (eq >= 0) {
        params.put(field.substring(0, eq), field.substring(eq + 1));
      }
    }
    return params;
  }

  /** The machine's memory in bytes (MemTotal of /proc/meminfo), or -1 when unknown. */
  public static long getMemoryCapacity() {
    return procKibibytes(Path.of("/proc/meminfo"), "MemTotal:");
  }

  /** This process's resident memory in bytes (VmRSS of /proc/self/status), or -1 when unknown. */
  public static long getMemoryUsage() {
    return procKibibytes(Path.of("/proc/self/status"), "VmRSS:");
  }

  private static long procKibibytes(Path file, String label) {
    try {
      List<String> lines = Files.readAllLines(file, StandardCharsets.US_ASCII);
      for (String line : lines) {
        if (line.startsWith(label)) {
          String[] fields = line.substring(label.length()).trim().split("\\s+");
          return Long.parseLong(fields[0]) * 1024;
        }
      }
    } catch (IOException | RuntimeException e) {
      return -1;
    }
    return -1;
  }

  /**
   * Tkrzw's primary hash (the hash databases' bucket hash): MurmurHash64A with Tkrzw's seed,
   * folded to 32 bits when {@code numBuckets} fits in 32 bits, modulo {@code numBuckets} (0 or
   * less: no modulo). The result is unsigned in a long.
   */
  public static long primaryHash(byte[] data, long numBuckets) {
    return reduce(murmur(data, 19780211L), numBuckets);
  }

  /** Tkrzw's secondary hash (the shard hash): FNV-1a-like, reduced as {@link #primaryHash}. */
  public static long secondaryHash(byte[] data, long numShards) {
    long hash = 0xcbf29ce484222325L;
    for (byte b : data) {
      hash = (hash ^ (b & 0xff)) * 109951162811L;
    }
    return reduce(hash, numShards);
  }

  private static long reduce(long hash, long modulus) {
    if (modulus <= 0) {
      modulus = -1L; // Tkrzw's UINT64MAX
    } else if (modulus <= 0xffffffffL) {
      hash = (((hash >>> 48) & 0xffffL) | ((hash >>> 16) & 0xffff0000L))
          ^ (((hash & 0xffffL) << 16) | ((hash >>> 16) & 0xffffL));
    }
    return Long.remainderUnsigned(hash, modulus);
  }

  private static long murmur(byte[] data, long seed) {
    final long mul = 0xc6a4a7935bd1e995L;
    final int shift = 47;
    long hash = seed ^ (data.length * mul);
    int pos = 0;
    for (; data.length - pos >= 8; pos += 8) {
      long word = 0;
      for (int i = 7; i >= 0; i--) {
        word = (word << 8) | (data[pos + i] & 0xffL);
      }
      word *= mul;
      word ^= word >>> shift;
      word *= mul;
      hash *= mul;
      hash ^= word;
    }
    int rest = data.length - pos;
    if (rest > 0) {
      for (int i = rest - 1; i >= 0; i--) {
        hash ^= (data[pos + i] & 0xffL) << (8 * i);
      }
      hash *= mul;
    }
    hash ^= hash >>> shift;
    hash *= mul;
    hash ^= hash >>> shift;
    return hash;
  }

  /** The Levenshtein distance between two texts, counted in Unicode code points. */
  public static int editDistanceLev(String a, String b) {
    int[] x = a.codePoints().toArray();
    int[] y = b.codePoints().toArray();
    int[] prev = new int[y.length + 1];
    int[] cur = new int[y.length + 1];
    for (int j = 0; j <= y.length; j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= x.length; i++) {
      cur[0] = i;
      for (int j = 1; j <= y.length; j++) {
        int cost = x[i - 1] == y[j - 1] ? 0 : 1;
        cur[j] = Math.min(Math.min(prev[j] + 1, cur[j - 1] + 1), prev[j - 1] + cost);
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[y.length];
  }

  /** The number as 8 big-endian bytes (the form Tkrzw's increment stores). */
  public static byte[] serializeInt(long num) {
    return ByteBuffer.allocate(8).putLong(num).array();
  }

  /** A big-endian integer of up to 8 bytes (sign-extended from 8 bytes only). */
  public static long deserializeInt(byte[] data) {
    long num = 0;
    for (int i = Math.max(0, data.length - 8); i < data.length; i++) {
      num = (num << 8) | (data[i] & 0xffL);
    }
    return num;
  }

  /** The number as an 8-byte big-endian IEEE 754 double. */
  public static byte[] serializeFloat(double num) {
    return ByteBuffer.allocate(8).putDouble(num).array();
  }

  /** An 8-byte big-endian double or a 4-byte big-endian float; NaN for other sizes. */
  public static double deserializeFloat(byte[] data) {
    if (data.length == 8) {
      return ByteBuffer.wrap(data).getDouble();
    }
    if (data.length == 4) {
      return ByteBuffer.wrap(data).getFloat();
    }
    return Double.NaN;
  }
}
