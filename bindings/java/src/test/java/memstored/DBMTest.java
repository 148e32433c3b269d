package memstored;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DBMTest {
  @TempDir Path dir;
  private final DBM dbm = new DBM();

  @AfterEach
  void destruct() {
    dbm.destruct();
  }

  static void expect(Status.Code want, Status got) {
    assertEquals(want, got.getCode(), got.toString());
  }

  private DBM openHash() {
    expect(Status.SUCCESS, dbm.open(dir.resolve("casket.tkh").toString(), true, "truncate=true,num_buckets=100"));
    return dbm;
  }

  @Test
  void openParamsAndClose() {
    String path = dir.resolve("casket.tkh").toString();
    expect(Status.SUCCESS, dbm.open(path, true, Map.of("num_buckets", "100")));
    assertTrue(dbm.isOpen());
    expect(Status.PRECONDITION_ERROR, dbm.open(path, true));
    expect(Status.SUCCESS, dbm.set("k", "v"));
    expect(Status.SUCCESS, dbm.close());
    expect(Status.PRECONDITION_ERROR, dbm.close());
    assertFalse(dbm.isOpen());
    // The record survives a reopen; a read-only database refuses writes.
    expect(Status.SUCCESS, dbm.open(path, false));
    assertEquals("v", dbm.get("k"));
    assertFalse(dbm.isWritable());
    expect(Status.PRECONDITION_ERROR, dbm.set("k", "w"));
    expect(Status.SUCCESS, dbm.close());
    // truncate=true starts empty.
    expect(Status.SUCCESS, dbm.open(path, true, "truncate=true"));
    assertEquals(0, dbm.count());
    dbm.close();
    Status bad = dbm.open(path, true, "colour=blue");
    expect(Status.INVALID_ARGUMENT_ERROR, bad);
    assertFalse(bad.getMessage().isEmpty(), "a failure carries the library's message");
    assertFalse(dbm.isOpen());
  }

  @Test
  void unopenedHandleAnswersPrecondition() {
    Status status = new Status();
    assertNull(dbm.get("k", status));
    expect(Status.PRECONDITION_ERROR, status);
    expect(Status.PRECONDITION_ERROR, dbm.set("k", "v"));
    expect(Status.PRECONDITION_ERROR, dbm.remove("k"));
    expect(Status.PRECONDITION_ERROR, dbm.clear());
    expect(Status.PRECONDITION_ERROR, dbm.synchronize(false));
    expect(Status.PRECONDITION_ERROR, dbm.setAndGet("k", "v", true).status);
    assertEquals(-1, dbm.count());
    assertEquals(Long.MIN_VALUE, dbm.increment("n", 1, 0, status));
    assertThrows(StatusException.class, dbm::makeIterator);
    assertTrue(dbm.inspect().isEmpty());
  }

  @Test
  void getSetRemove() {
    openHash();
    expect(Status.SUCCESS, dbm.set("first", "hop", true));
    expect(Status.DUPLICATION_ERROR, dbm.set("first".getBytes(UTF_8), "jump".getBytes(UTF_8), false));
    assertEquals("hop", dbm.get("first"));
    assertArrayEquals("hop".getBytes(UTF_8), dbm.get("first".getBytes(UTF_8)));
    Status status = new Status();
    assertNull(dbm.get("none", status));
    expect(Status.NOT_FOUND_ERROR, status);
    assertEquals("hop", dbm.get("first", status));
    expect(Status.SUCCESS, status);
    assertTrue(dbm.contains("first"));
    assertFalse(dbm.contains("none".getBytes(UTF_8)));
    // Empty and binary keys and values round-trip.
    expect(Status.SUCCESS, dbm.set("", ""));
    assertArrayEquals(new byte[0], dbm.get(new byte[0]));
    expect(Status.SUCCESS, dbm.set(new byte[] {0, 1, 0}, new byte[] {9, 0, 9}));
    assertArrayEquals(new byte[] {9, 0, 9}, dbm.get(new byte[] {0, 1, 0}));
    // Non-ASCII text is UTF-8.
    expect(Status.SUCCESS, dbm.set("鍵", "値"));
    assertArrayEquals("値".getBytes(UTF_8), dbm.get("鍵".getBytes(UTF_8)));
    // A large value goes in and comes back whole.
    byte[] large = new byte[3 << 20];
    for (int i = 0; i < large.length; i++) {
      large[i] = (byte) (i * 31);
    }
    expect(Status.SUCCESS, dbm.set("large".getBytes(UTF_8), large));
    assertArrayEquals(large, dbm.get("large".getBytes(UTF_8)));
    expect(Status.SUCCESS, dbm.remove("large"));
    expect(Status.SUCCESS, dbm.remove("first"));
    expect(Status.NOT_FOUND_ERROR, dbm.remove("first".getBytes(UTF_8)));
    assertEquals(4 - 1, dbm.count());
  }

  @Test
  void appendIncrementCompareExchange() {
    openHash();
    dbm.set("first", "hop");
    expect(Status.SUCCESS, dbm.append("first", "step", ","));
    expect(Status.SUCCESS, dbm.append("new".getBytes(UTF_8), "x".getBytes(UTF_8), ",".getBytes(UTF_8)));
    assertEquals("hop,step", dbm.get("first"));
    assertEquals("x", dbm.get("new"));
    Status status = new Status();
    assertEquals(105, dbm.increment("n", 5, 100, status));
    expect(Status.SUCCESS, status);
    assertEquals(103, dbm.increment("n".getBytes(UTF_8), -2, 0, null));
    assertEquals(103, dbm.increment("n", Long.MIN_VALUE, 0, status));
    assertEquals("103", dbm.get("n"), "increment stores decimal text");
    assertEquals(Long.MIN_VALUE, dbm.increment("first", 1, 0, status));
    expect(Status.INFEASIBLE_ERROR, status);

    expect(Status.INFEASIBLE_ERROR, dbm.compareExchange("cx", "a", "b"));
    expect(Status.SUCCESS, dbm.compareExchange("cx", null, ""));
    assertEquals("", dbm.get("cx"), "an empty desired value is a value, not a removal");
    expect(Status.SUCCESS, dbm.compareExchange("cx".getBytes(UTF_8), new byte[0], "z".getBytes(UTF_8)));
    expect(Status.SUCCESS, dbm.compareExchange("cx", "z", null));
    expect(Status.NOT_FOUND_ERROR, dbm.remove("cx"));
  }

  @Test
  void setAndGetRemoveAndGet() {
    openHash();
    Status.And<String> r = dbm.setAndGet("sg", "1", true);
    expect(Status.SUCCESS, r.status);
    assertNull(r.value);
    r = dbm.setAndGet("sg", "2", false);
    expect(Status.DUPLICATION_ERROR, r.status);
    assertEquals("1", r.value);
    Status.And<byte[]> b = dbm.setAndGet("sg".getBytes(UTF_8), "3".getBytes(UTF_8), true);
    expect(Status.SUCCESS, b.status);
    assertArrayEquals("1".getBytes(UTF_8), b.value);
    r = dbm.removeAndGet("sg");
    expect(Status.SUCCESS, r.status);
    assertEquals("3", r.value);
    b = dbm.removeAndGet("sg".getBytes(UTF_8));
    expect(Status.NOT_FOUND_ERROR, b.status);
    assertNull(b.value);
  }

  @Test
  void multiRecordCalls() {
    openHash();
    Map<String, String> ab = new LinkedHashMap<>();
    ab.put("a", "1");
    ab.put("b", "2");
    expect(Status.SUCCESS, dbm.setMultiString(ab, true));
    Map<byte[], byte[]> ca = new LinkedHashMap<>();
    ca.put("c".getBytes(UTF_8), "3".getBytes(UTF_8));
    ca.put("a".getBytes(UTF_8), "9".getBytes(UTF_8));
    expect(Status.DUPLICATION_ERROR, dbm.setMulti(ca, false));
    assertEquals(Map.of("a", "1", "b", "2", "c", "3"), dbm.getMulti(new String[] {"a", "b", "c", "zz"}));
    Map<byte[], byte[]> raw = dbm.getMulti(new byte[][] {"b".getBytes(UTF_8)});
    assertEquals(1, raw.size());
    Map.Entry<byte[], byte[]> only = raw.entrySet().iterator().next();
    assertArrayEquals("b".getBytes(UTF_8), only.getKey());
    assertArrayEquals("2".getBytes(UTF_8), only.getValue());
    assertTrue(dbm.getMulti(new String[0]).isEmpty());
    expect(Status.NOT_FOUND_ERROR, dbm.removeMulti(new String[] {"a", "b", "zz"}));
    assertFalse(dbm.contains("a"));
    assertTrue(dbm.contains("c"));
    expect(Status.SUCCESS, dbm.removeMulti(new byte[][] {"c".getBytes(UTF_8)}));
    assertEquals(0, dbm.count());
  }

  @Test
  void compareExchangeMulti() {
    expect(Status.SUCCESS, dbm.open("+", true));
    expect(Status.SUCCESS, dbm.setMultiString(Map.of("Alice", "3000", "Bob", "1000"), false));
    Map<String, String> after = Map.of("Alice", "2500", "Bob", "1500");
    expect(Status.INFEASIBLE_ERROR,
        dbm.compareExchangeMultiString(Map.of("Alice", "2999", "Bob", "1000"), after));
    assertEquals("3000", dbm.get("Alice"), "a failed exchange changes nothing");
    expect(Status.SUCCESS,
        dbm.compareExchangeMultiString(Map.of("Alice", "3000", "Bob", "1000"), after));
    // Null values: Carol must be absent; Bob is removed.
    Map<byte[], byte[]> expected = new LinkedHashMap<>();
    expected.put("Carol".getBytes(UTF_8), null);
    Map<byte[], byte[]> desired = new LinkedHashMap<>();
    desired.put("Carol".getBytes(UTF_8), "1".getBytes(UTF_8));
    desired.put("Bob".getBytes(UTF_8), null);
    expect(Status.SUCCESS, dbm.compareExchangeMulti(expected, desired));
    assertFalse(dbm.contains("Bob"));
    assertEquals("1", dbm.get("Carol"));
    expect(Status.SUCCESS, dbm.compareExchangeMultiString(Map.of(), Map.of()));
  }

  @Test
  void maintenanceAndInspect() {
    openHash();
    // 4 KiB values: files under 64 KiB are never worth rebuilding.
    String big = "v".repeat(4096);
    for (int i = 0; i < 20; i++) {
      dbm.set("k" + i, big + i);
    }
    for (int i = 0; i < 15; i++) {
      dbm.remove("k" + i);
    }
    expect(Status.SUCCESS, dbm.synchronize(true));
    expect(Status.SUCCESS, dbm.synchronize(false, Map.of()));
    assertTrue(dbm.shouldBeRebuilt(), "15 of 20 records are dead");
    expect(Status.SUCCESS, dbm.rebuild());
    assertFalse(dbm.shouldBeRebuilt(), "a freshly rebuilt file needs no rebuild");
    expect(Status.SUCCESS, dbm.rebuild(Map.of("num_buckets", "10")));
    Map<String, String> props = dbm.inspect();
    assertEquals("HashDBM", props.get("class"), props.toString());
    assertEquals("5", props.get("num_records"));
    assertTrue(dbm.isWritable());
    assertFalse(dbm.isOrdered());
    assertNotEquals("", dbm.toString());
    expect(Status.SUCCESS, dbm.clear());
    assertEquals(0, dbm.count());
  }

  @Test
  void search() {
    expect(Status.SUCCESS, dbm.open(dir.resolve("casket.tkt").toString(), true, "truncate=true"));
    assertTrue(dbm.isOrdered());
    for (String k : List.of("apple", "apricot", "banana", "cherry")) {
      dbm.set(k, k);
    }
    assertArrayEquals(new String[] {"apple", "apricot"}, dbm.search("begin", "ap", 0));
    assertArrayEquals(new String[] {"banana"}, dbm.search("contain", "an", 0));
    assertArrayEquals(new String[] {"banana"}, dbm.search("regex", "^.a", 0));
    assertArrayEquals(new String[] {"banana", "cherry"}, dbm.search("upper", "banana", 0));
    assertArrayEquals(new String[] {"cherry"}, dbm.search("upperex", "banana", 0));
    assertArrayEquals(new String[] {"banana"}, dbm.search("lower", "banana", 1));
    assertArrayEquals(new String[] {"apple", "apricot"}, dbm.search("begin", "", 2));
    // An unknown mode is an error, as in tkrzw-java (it once gave an empty array).
    StatusException bad = assertThrows(StatusException.class, () -> dbm.search("nonsense", "x", 0));
    expect(Status.INVALID_ARGUMENT_ERROR, bad.getStatus());
    byte[][] raw = dbm.search("end", "rry".getBytes(UTF_8), 0);
    assertEquals(1, raw.length);
    assertArrayEquals("cherry".getBytes(UTF_8), raw[0]);
  }

  @Test
  void parseParams() {
    assertEquals(Map.of("a", "1", "b", "x=y"), DBM.parseParams(" a = 1 ,b=x=y,junk"));
    assertTrue(DBM.parseParams(null).isEmpty());
  }
}
