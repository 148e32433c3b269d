package memstored;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Asynchronous calls on a {@link DBM}, as tkrzw-java's {@code AsyncDBM}: each call runs on a
 * pool of worker threads and returns a {@link Future} at once. The database must stay open
 * while the AsyncDBM is in use; {@link #destruct} waits for the queued calls, then stops the
 * workers.
 */
public class AsyncDBM {
  private static final AtomicInteger POOLS = new AtomicInteger();

  private final DBM dbm;
  private final ExecutorService workers;

  /** An AsyncDBM running calls on {@code numWorkerThreads} daemon threads (at least one). */
  public AsyncDBM(DBM dbm, int numWorkerThreads) {
    this.dbm = dbm;
    int pool = POOLS.incrementAndGet();
    AtomicInteger n = new AtomicInteger();
    ThreadFactory factory = r -> {
      Thread t = new Thread(r, "memstored-async-" + pool + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
    this.workers = Executors.newFixedThreadPool(Math.max(1, numWorkerThreads), factory);
  }

  /** Finishes the queued calls and stops the worker threads. */
  public void destruct() {
    workers.shutdown();
    try {
      while (!workers.awaitTermination(1, TimeUnit.MINUTES)) {
        // The queued calls are still running: keep waiting, as Tkrzw's destructor does.
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private <T> Future<T> run(Supplier<T> task) {
    return new Future<>(CompletableFuture.supplyAsync(task, workers));
  }

  public Future<Status.And<byte[]>> get(byte[] key) {
    return run(() -> {
      Status s = new Status();
      byte[] v = dbm.get(key, s);
      return new Status.And<>(s, v);
    });
  }

  public Future<Status.And<String>> get(String key) {
    return run(() -> {
      Status s = new Status();
      String v = dbm.get(key, s);
      return new Status.And<>(s, v);
    });
  }

  /** The records of the keys that exist; NOT_FOUND_ERROR when some were missing. */
  public Future<Status.And<Map<byte[], byte[]>>> getMulti(byte[][] keys) {
    return run(() -> {
      Map<byte[], byte[]> got = dbm.getMulti(keys);
      return new Status.And<>(multiStatus(got.size(), keys.length), got);
    });
  }

  public Future<Status.And<Map<String, String>>> getMulti(String[] keys) {
    return run(() -> {
      Map<String, String> got = dbm.getMulti(keys);
      return new Status.And<>(multiStatus(got.size(), keys.length), got);
    });
  }

  private Status multiStatus(int got, int wanted) {
    if (!dbm.isOpen()) {
      return new Status(Status.PRECONDITION_ERROR, "not opened");
    }
    return got == wanted ? new Status() : new Status(Status.NOT_FOUND_ERROR);
  }

  public Future<Status> set(byte[] key, byte[] value, boolean overwrite) {
    return run(() -> dbm.set(key, value, overwrite));
  }

  public Future<Status> set(byte[] key, byte[] value) {
    return set(key, value, true);
  }

  public Future<Status> set(String key, String value, boolean overwrite) {
    return run(() -> dbm.set(key, value, overwrite));
  }

  public Future<Status> set(String key, String value) {
    return set(key, value, true);
  }

  public Future<Status> setMulti(Map<byte[], byte[]> records, boolean overwrite) {
    return run(() -> dbm.setMulti(records, overwrite));
  }

  public Future<Status> setMultiString(Map<String, String> records, boolean overwrite) {
    return run(() -> dbm.setMultiString(records, overwrite));
  }

  public Future<Status> remove(byte[] key) {
    return run(() -> dbm.remove(key));
  }

  public Future<Status> remove(String key) {
    return run(() -> dbm.remove(key));
  }

  public Future<Status> removeMulti(byte[][] keys) {
    return run(() -> dbm.removeMulti(keys));
  }

  public Future<Status> removeMulti(String[] keys) {
    return run(() -> dbm.removeMulti(keys));
  }

  public Future<Status> append(byte[] key, byte[] value, byte[] delim) {
    return run(() -> dbm.append(key, value, delim));
  }

  public Future<Status> append(String key, String value, String delim) {
    return run(() -> dbm.append(key, value, delim));
  }

  public Future<Status> appendMulti(Map<byte[], byte[]> records, byte[] delim) {
    return run(() -> dbm.appendMulti(records, delim));
  }

  public Future<Status> appendMulti(Map<String, String> records, String delim) {
    return run(() -> dbm.appendMulti(records, delim));
  }

  public Future<Status> compareExchange(byte[] key, byte[] expected, byte[] desired) {
    return run(() -> dbm.compareExchange(key, expected, desired));
  }

  public Future<Status> compareExchange(String key, String expected, String desired) {
    return run(() -> dbm.compareExchange(key, expected, desired));
  }

  /** The new value in the result (Long.MIN_VALUE on failure). */
  public Future<Status.And<Long>> increment(byte[] key, long inc, long init) {
    return run(() -> {
      Status s = new Status();
      long v = dbm.increment(key, inc, init, s);
      return new Status.And<>(s, v);
    });
  }

  public Future<Status.And<Long>> increment(String key, long inc, long init) {
    return increment(Native.utf8(key), inc, init);
  }

  public Future<Status> compareExchangeMulti(
      Map<byte[], byte[]> expected, Map<byte[], byte[]> desired) {
    return run(() -> dbm.compareExchangeMulti(expected, desired));
  }

  public Future<Status> compareExchangeMultiString(
      Map<String, String> expected, Map<String, String> desired) {
    return run(() -> dbm.compareExchangeMultiString(expected, desired));
  }

  public Future<Status> rekey(byte[] oldKey, byte[] newKey, boolean overwrite, boolean copying) {
    return run(() -> dbm.rekey(oldKey, newKey, overwrite, copying));
  }

  public Future<Status> rekey(String oldKey, String newKey, boolean overwrite, boolean copying) {
    return run(() -> dbm.rekey(oldKey, newKey, overwrite, copying));
  }

  public Future<Status.And<byte[][]>> popFirst() {
    return run(() -> {
      Status s = new Status();
      byte[][] r = dbm.popFirst(s);
      return new Status.And<>(s, r);
    });
  }

  public Future<Status.And<String[]>> popFirstString() {
    return run(() -> {
      Status s = new Status();
      String[] r = dbm.popFirstString(s);
      return new Status.And<>(s, r);
    });
  }

  public Future<Status> pushLast(byte[] value, double wtime) {
    return run(() -> dbm.pushLast(value, wtime));
  }

  public Future<Status> pushLast(String value, double wtime) {
    return run(() -> dbm.pushLast(value, wtime));
  }

  public Future<Status> clear() {
    return run(dbm::clear);
  }

  public Future<Status> rebuild(Map<String, String> params) {
    return run(() -> dbm.rebuild(params));
  }

  public Future<Status> rebuild() {
    return rebuild(null);
  }

  public Future<Status> synchronize(boolean hard, Map<String, String> params) {
    return run(() -> dbm.synchronize(hard, params));
  }

  public Future<Status> synchronize(boolean hard) {
    return synchronize(hard, null);
  }

  public Future<Status> copyFileData(String destPath, boolean syncHard) {
    return run(() -> dbm.copyFileData(destPath, syncHard));
  }

  public Future<Status> export(DBM destDBM) {
    return run(() -> dbm.export(destDBM));
  }

  public Future<Status> exportToFlatRecords(File destFile) {
    return run(() -> dbm.exportToFlatRecords(destFile));
  }

  public Future<Status> importFromFlatRecords(File srcFile) {
    return run(() -> dbm.importFromFlatRecords(srcFile));
  }

  /** The matching keys; a failure (e.g. an unknown mode) is the result's status. */
  public Future<Status.And<byte[][]>> search(String mode, byte[] pattern, int capacity) {
    return run(() -> {
      try {
        return new Status.And<>(new Status(), dbm.search(mode, pattern, capacity));
      } catch (StatusException e) {
        return new Status.And<>(e.getStatus(), new byte[0][]);
      }
    });
  }

  public Future<Status.And<String[]>> search(String mode, String pattern, int capacity) {
    return run(() -> {
      try {
        return new Status.And<>(new Status(), dbm.search(mode, pattern, capacity));
      } catch (StatusException e) {
        return new Status.And<>(e.getStatus(), new String[0]);
      }
    });
  }

  @Override
  public String toString() {
    return "memstored.AsyncDBM(" + dbm + ")";
  }
}
