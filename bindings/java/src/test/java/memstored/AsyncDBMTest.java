package memstored;

import static java.nio.charset.StandardCharsets.UTF_8;
import static memstored.DBMTest.expect;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AsyncDBMTest {
  @TempDir Path dir;
  private final DBM dbm = new DBM();
  private AsyncDBM async;

  @BeforeEach
  void open() {
    expect(Status.SUCCESS, dbm.open(dir.resolve("casket.tkh").toString(), true, "truncate=true"));
    async = new AsyncDBM(dbm, 4);
  }

  @AfterEach
  void destruct() {
    async.destruct();
    dbm.destruct();
  }

  @Test
  void futuresCarryStatusesAndValues() {
    Future<Status> f = async.set("one", "hop", true);
    assertTrue(f.toString().contains("Future"));
    assertTrue(f.await(-1));
    expect(Status.SUCCESS, f.get());
    expect(Status.DUPLICATION_ERROR, async.set("one", "x", false).get());
    expect(Status.SUCCESS, async.append("one".getBytes(UTF_8), "1".getBytes(UTF_8),
        ":".getBytes(UTF_8)).get());
    Status.And<String> got = async.get("one").get();
    expect(Status.SUCCESS, got.status);
    assertEquals("hop:1", got.value);
    Status.And<byte[]> missing = async.get("nope".getBytes(UTF_8)).get();
    expect(Status.NOT_FOUND_ERROR, missing.status);
    assertEquals(null, missing.value);
    assertTrue(async.toString().contains("AsyncDBM"));
  }

  @Test
  void multiCallsAndIncrement() {
    expect(Status.SUCCESS, async.setMultiString(Map.of("a", "1", "b", "2"), false).get());
    Status.And<Map<String, String>> got = async.getMulti(new String[] {"a", "b", "c"}).get();
    expect(Status.NOT_FOUND_ERROR, got.status);
    assertEquals(Map.of("a", "1", "b", "2"), got.value);
    expect(Status.SUCCESS, async.getMulti(new String[] {"a", "b"}).get().status);
    expect(Status.SUCCESS, async.compareExchange("a", "1", "11").get());
    expect(Status.INFEASIBLE_ERROR, async.compareExchange("a", "1", "12").get());
    expect(Status.SUCCESS, async.removeMulti(new String[] {"a", "b"}).get());
    assertEquals(0, dbm.count());
    Status.And<Long> inc = async.increment("num", 5, 100).get();
    expect(Status.SUCCESS, inc.status);
    assertEquals(105L, inc.value);
    assertEquals(110L, async.increment("num", 5, 100).get().value);
  }

  @Test
  void searchFailureIsTheResultsStatus() {
    async.set("hello", "1").get();
    async.set("hi", "2").get();
    async.set("chao", "3").get();
    Status.And<String[]> found = async.search("begin", "h", 0).get();
    expect(Status.SUCCESS, found.status);
    assertEquals(2, found.value.length);
    Status.And<byte[][]> bad = async.search("nomode", "h".getBytes(UTF_8), 0).get();
    expect(Status.INVALID_ARGUMENT_ERROR, bad.status);
    assertEquals(0, bad.value.length);
  }

  /** destruct lets every queued call finish before the workers stop. */
  @Test
  void destructFinishesQueuedCalls() {
    List<Future<Status>> futures = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      futures.add(async.set("k" + i, "v" + i));
    }
    async.destruct();
    assertEquals(1000, dbm.count());
    for (Future<Status> f : futures) {
      assertTrue(f.await(0));
      expect(Status.SUCCESS, f.get());
    }
  }

  @Test
  void awaitTimesOut() {
    // A worker kept busy by a call that waits: the next call's future is not done in 10 ms.
    AsyncDBM one = new AsyncDBM(dbm, 1);
    CountDownLatch release = new CountDownLatch(1);
    Future<Status> blocker = one.compareExchange("b", null, "x");
    Future<Status> busy = new Future<>(blocker.toCompletableFuture().thenApplyAsync(s -> {
      try {
        release.await(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return s;
    }));
    assertFalse(busy.await(0.01));
    release.countDown();
    assertTrue(busy.await(-1));
    expect(Status.SUCCESS, busy.get());
    one.destruct();
  }

  @Test
  void destructedFutureRefusesGet() {
    Future<Status> f = async.set("k", "v");
    f.destruct();
    assertThrows(IllegalStateException.class, f::get);
    assertTrue(f.toString().contains("destroyed"));
  }

  @Test
  void queueAndRekey() {
    expect(Status.SUCCESS, async.set("aa", "AAA").get());
    expect(Status.SUCCESS, async.rekey("aa", "bb", false, false).get());
    assertEquals("AAA", async.get("bb").get().value);
    Status.And<byte[][]> pop = async.popFirst().get();
    expect(Status.SUCCESS, pop.status);
    assertArrayEquals("bb".getBytes(UTF_8), pop.value[0]);
    expect(Status.SUCCESS, async.pushLast("foo", 0).get());
    Status.And<String[]> popStr = async.popFirstString().get();
    expect(Status.SUCCESS, popStr.status);
    assertEquals("foo", popStr.value[1]);
    expect(Status.NOT_FOUND_ERROR, async.popFirst().get().status);
  }
}
