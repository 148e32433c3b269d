package memstored;

import static memstored.DBMTest.expect;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Many threads on one handle: atomic counters and transfers, while every thread reads its own
 * status (the C side keeps it per thread) and a garbage collection runs now and then.
 */
class ConcurrencyTest {
  @TempDir Path dir;

  @Test
  void manyThreadsOnOneDatabase() throws Exception {
    DBM dbm = new DBM();
    expect(Status.SUCCESS, dbm.open(dir.resolve("casket.tkh").toString(), true, "truncate=true,num_shards=4"));
    final int workers = 8;
    final int rounds = 300;
    expect(Status.SUCCESS, dbm.setMultiString(Map.of("Alice", "100000", "Bob", "0"), true));
    ExecutorService pool = Executors.newFixedThreadPool(workers);
    List<Future<String>> results = new ArrayList<>();
    for (int w = 0; w < workers; w++) {
      final int id = w;
      results.add(pool.submit(() -> {
        Status status = new Status();
        for (int i = 0; i < rounds; i++) {
          dbm.increment("counter", 1, 0, status);
          if (!status.isOK()) {
            return "increment: " + status;
          }
          String own = id + "-" + i;
          dbm.set(own, own);
          if (dbm.get("absent-" + own, status) != null || !status.equals(Status.NOT_FOUND_ERROR)) {
            return "absent key: " + status;
          }
          if (!own.equals(dbm.get(own, status)) || !status.isOK()) {
            return "own key: " + status;
          }
          if (i % 100 == 0) {
            System.gc();
          }
          while (true) {
            String a = dbm.get("Alice");
            String b = dbm.get("Bob");
            Status st = dbm.compareExchangeMultiString(Map.of("Alice", a, "Bob", b), Map.of(
                "Alice", Long.toString(Long.parseLong(a) - 1), "Bob", Long.toString(Long.parseLong(b) + 1)));
            if (st.isOK()) {
              break;
            }
            if (!st.equals(Status.INFEASIBLE_ERROR)) {
              return "transfer: " + st;
            }
          }
        }
        return "";
      }));
    }
    for (Future<String> r : results) {
      assertEquals("", r.get());
    }
    pool.shutdown();
    assertEquals(workers * rounds, dbm.increment("counter", 0, 0, null));
    long a = Long.parseLong(dbm.get("Alice"));
    long b = Long.parseLong(dbm.get("Bob"));
    assertEquals(100000, a + b, "money was made or lost");
    assertEquals(workers * rounds, b);
    assertEquals(3 + workers * rounds, dbm.count());
    String[] keys = dbm.search("begin", "A", 0);
    Arrays.sort(keys);
    assertArrayEquals(new String[] {"Alice"}, keys);
    expect(Status.SUCCESS, dbm.close());
  }
}
