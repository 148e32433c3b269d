package memstored;

import static java.nio.charset.StandardCharsets.UTF_8;
import static memstored.DBMTest.expect;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The DBM calls tkrzw-java has beyond the first binding's (issue 44). */
class TkrzwOpsTest {
  @TempDir Path dir;
  private final DBM dbm = new DBM();

  @AfterEach
  void destruct() {
    dbm.destruct();
  }

  private String open(String name) {
    String path = dir.resolve(name).toString();
    expect(Status.SUCCESS, dbm.open(path, true, "truncate=true"));
    return path;
  }

  @Test
  void fileFacts() {
    String path = open("casket.tkh");
    dbm.set("k", "v");
    expect(Status.SUCCESS, dbm.synchronize(false));
    assertTrue(dbm.getFileSize() > 0);
    assertTrue(dbm.getFilePath().contains(path), dbm.getFilePath());
    double now = System.currentTimeMillis() / 1000.0;
    assertTrue(Math.abs(dbm.getTimestamp() - now) < 3600, "timestamp " + dbm.getTimestamp());
    assertTrue(dbm.isHealthy());
    assertTrue(dbm.toString().contains("HashDBM"), dbm.toString());
    assertTrue(dbm.toString().contains("count=1"), dbm.toString());
    DBM closed = new DBM();
    assertFalse(closed.isHealthy());
    assertEquals(-1, closed.getFileSize());
    assertNull(closed.getFilePath());
  }

  @Test
  void appendMultiAndCompareExchangeAndGet() {
    open("casket.tkh");
    dbm.setMultiString(Map.of("one", "first", "two", "second"), true);
    expect(Status.SUCCESS, dbm.appendMulti(Map.of("two", "2", "three", "3"), ":"));
    assertEquals("second:2", dbm.get("two"));
    assertEquals("3", dbm.get("three"));
    Status.And<String> r = dbm.compareExchangeAndGet("xyz", null, "123");
    expect(Status.SUCCESS, r.status);
    assertNull(r.value);
    r = dbm.compareExchangeAndGet("xyz", "999", "456");
    expect(Status.INFEASIBLE_ERROR, r.status);
    assertEquals("123", r.value);
    r = dbm.compareExchangeAndGet("xyz", "123", DBM.ANY_STRING);
    expect(Status.SUCCESS, r.status);
    assertEquals("123", r.value);
    assertEquals("123", dbm.get("xyz"), "ANY as desired leaves the value");
    r = dbm.compareExchangeAndGet("xyz", DBM.ANY_STRING, null);
    expect(Status.SUCCESS, r.status);
    assertEquals("123", r.value);
    assertNull(dbm.get("xyz"));
  }

  @Test
  void anyValue() {
    open("casket.tkh");
    expect(Status.INFEASIBLE_ERROR, dbm.compareExchange("xyz", DBM.ANY_STRING, DBM.ANY_STRING));
    expect(Status.SUCCESS, dbm.compareExchange("xyz", null, "abc"));
    expect(Status.SUCCESS, dbm.compareExchange("xyz", DBM.ANY_STRING, DBM.ANY_STRING));
    expect(Status.SUCCESS, dbm.compareExchange("xyz", DBM.ANY_STRING, "def"));
    assertEquals("def", dbm.get("xyz"));
    Map<String, String> any = new HashMap<>();
    any.put("xyz", DBM.ANY_STRING);
    Map<String, String> remove = new HashMap<>();
    remove.put("xyz", null);
    expect(Status.SUCCESS, dbm.compareExchangeMultiString(any, remove));
    assertNull(dbm.get("xyz"));
    expect(Status.INFEASIBLE_ERROR, dbm.compareExchangeMultiString(any, Map.of("xyz", "v")));
    // A value that merely looks like ANY_STRING is an ordinary value.
    expect(Status.SUCCESS, dbm.compareExchange("nul", null, new String("\0")));
    assertEquals("\0", dbm.get("nul"));
  }

  @Test
  void rekey() {
    open("casket.tkh");
    dbm.set("zero", "foo");
    dbm.set("two", "bar");
    expect(Status.SUCCESS, dbm.rekey("zero", "one", true, false));
    assertNull(dbm.get("zero"));
    assertEquals("foo", dbm.get("one"));
    expect(Status.DUPLICATION_ERROR, dbm.rekey("one", "two", false, false));
    expect(Status.SUCCESS, dbm.rekey("one", "copy", false, true));
    assertEquals("foo", dbm.get("one"));
    assertEquals("foo", dbm.get("copy"));
    expect(Status.NOT_FOUND_ERROR, dbm.rekey("absent", "x", true, false));
  }

  @Test
  void queue() {
    open("casket.tkt");
    Status status = new Status();
    assertNull(dbm.popFirst(status));
    expect(Status.NOT_FOUND_ERROR, status);
    expect(Status.SUCCESS, dbm.pushLast("one", 0));
    expect(Status.SUCCESS, dbm.pushLast("two", 0));
    expect(Status.SUCCESS, dbm.pushLast("three", -1));
    assertEquals("one", dbm.popFirstString(status)[1]);
    expect(Status.SUCCESS, status);
    assertEquals("two", dbm.popFirstString()[1]);
    byte[][] last = dbm.popFirst();
    assertArrayEquals("three".getBytes(UTF_8), last[1]);
    assertEquals(0, dbm.count());
  }

  @Test
  void copyExportAndRestore() {
    String path = open("casket.tkh");
    for (int i = 0; i < 20; i++) {
      dbm.set("k" + i, "v" + i);
    }
    String copy = dir.resolve("casket-copy.tkh").toString();
    expect(Status.SUCCESS, dbm.copyFileData(copy, false));
    DBM other = new DBM();
    expect(Status.SUCCESS, other.open(copy, false));
    assertTrue(other.isHealthy());
    assertEquals(20, other.count());
    other.close();
    DBM dest = new DBM();
    expect(Status.SUCCESS, dest.open("", true, "dbm=BabyDBM"));
    expect(Status.SUCCESS, dbm.export(dest));
    assertEquals(20, dest.count());
    assertEquals("v7", dest.get("k7"));
    dest.close();
    expect(Status.PRECONDITION_ERROR, dbm.export(dest));
    String restored = dir.resolve("casket-restored.tkh").toString();
    expect(Status.SUCCESS, DBM.restoreDatabase(copy, restored, "HashDBM", -1, null));
    expect(Status.SUCCESS, other.open(restored, false));
    assertEquals(20, other.count());
    other.close();
    assertTrue(Files.exists(Path.of(path)));
  }

  @Test
  void searchUnknownModeThrows() {
    open("casket.tkh");
    dbm.set("00000100", "x");
    assertEquals(1, dbm.search("contain", "001", 0).length);
    StatusException e = assertThrows(StatusException.class, () -> dbm.search("foo", "0", 3));
    expect(Status.INVALID_ARGUMENT_ERROR, e.getStatus());
  }

  /** Close releases the store; its iterators answer PRECONDITION_ERROR instead of crashing. */
  @Test
  void iteratorOfClosedDatabase() {
    String path = open("casket.tkt");
    dbm.set("a", "1");
    Iterator it = dbm.makeIterator();
    expect(Status.SUCCESS, it.first());
    expect(Status.SUCCESS, dbm.close());
    expect(Status.SUCCESS, dbm.open(path, true));
    Status status = new Status();
    assertNull(it.get(status));
    expect(Status.PRECONDITION_ERROR, status);
    expect(Status.PRECONDITION_ERROR, it.first());
    expect(Status.PRECONDITION_ERROR, it.next());
    assertTrue(it.toString().contains("unlocated"), it.toString());
    it.destruct();
    assertEquals("1", dbm.get("a"));
  }

  @Test
  void iteratorToStringShowsTheKey() {
    open("casket.tkt");
    dbm.set("00001", "v");
    Iterator it = dbm.makeIterator();
    assertTrue(it.toString().contains("unlocated"));
    it.first();
    assertEquals("memstored.Iterator(key=\"00001\")", it.toString());
    it.destruct();
  }

  @Test
  void stringMapsKeepOrderAndNulls() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("a", null);
    m.put("b", DBM.ANY_STRING);
    Map<byte[], byte[]> raw = Records.utf8(m);
    byte[][] values = raw.values().toArray(new byte[0][]);
    assertNull(values[0]);
    assertTrue(values[1] == DBM.ANY_BYTES);
  }
}
