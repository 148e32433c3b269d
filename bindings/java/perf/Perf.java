import java.nio.file.Files;
import java.nio.file.Path;
import memstored.DBM;
import memstored.Status;

/**
 * Seed 004's measurement in Java: N records with keys and values "%08d", set then get, by T
 * threads (thread t takes every T-th index); the same loop as scripts/bench-bindings/perf.c.
 * Written against memstored's binding; scripts/bench-bindings.sh builds it unchanged but for the
 * package name against tkrzw-java too, whose API this is.
 * Usage: java Perf PATH PARAMS N T; prints "set QPS", "get QPS" and max RSS (KiB).
 */
public final class Perf {
  private Perf() {}

  /** i as eight zero-padded decimal digits, like "%08d" (String.format would be measured). */
  static byte[] key(long i) {
    byte[] out = new byte[8];
    for (int p = 7; p >= 0; p--) {
      out[p] = (byte) ('0' + i % 10);
      i /= 10;
    }
    return out;
  }

  static double phase(DBM dbm, long n, int threads, boolean get) throws InterruptedException {
    Thread[] workers = new Thread[threads];
    long[] failures = new long[threads];
    long start = System.nanoTime();
    for (int t = 0; t < threads; t++) {
      final int id = t;
      workers[t] = new Thread(() -> {
        for (long i = id; i < n; i += threads) {
          byte[] k = key(i);
          if (get) {
            byte[] v = dbm.get(k);
            if (v == null || v.length != k.length) {
              failures[id]++;
            }
          } else if (!dbm.set(k, k, true).isOK()) {
            failures[id]++;
          }
        }
      });
      workers[t].start();
    }
    for (Thread w : workers) {
      w.join();
    }
    double secs = (System.nanoTime() - start) / 1e9;
    long failed = 0;
    for (long f : failures) {
      failed += f;
    }
    if (failed > 0) {
      throw new IllegalStateException(failed + " failed " + (get ? "get" : "set") + " calls");
    }
    return n / secs;
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 4) {
      System.err.println("usage: Perf PATH PARAMS N THREADS");
      System.exit(2);
    }
    long n = Long.parseLong(args[2]);
    int threads = Integer.parseInt(args[3]);
    DBM dbm = new DBM();
    Status st = dbm.open(args[0], true, args[1]);
    st.orDie();
    double setQps = phase(dbm, n, threads, false);
    double getQps = phase(dbm, n, threads, true);
    if (dbm.count() != n) {
      throw new IllegalStateException("count " + dbm.count() + ", want " + n);
    }
    long rss = 0;
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("VmHWM:")) {
        rss = Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    dbm.close().orDie();
    System.out.printf("set %.0f%nget %.0f%nrss_kib %d%n", setQps, getQps, rss);
  }
}
