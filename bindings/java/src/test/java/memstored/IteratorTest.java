package memstored;

import static java.nio.charset.StandardCharsets.UTF_8;
import static memstored.DBMTest.expect;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class IteratorTest {
  @TempDir Path dir;
  private final DBM dbm = new DBM();

  @AfterEach
  void destruct() {
    dbm.destruct();
  }

  private void at(Iterator it, String key) {
    Status status = new Status();
    String[] rec = it.getString(status);
    expect(Status.SUCCESS, status);
    assertArrayEquals(new String[] {key, key + key}, rec);
  }

  @Test
  void ordered() {
    expect(Status.SUCCESS, dbm.open(dir.resolve("casket.tkt").toString(), true, "truncate=true"));
    for (String k : List.of("a", "b", "c", "d")) {
      dbm.set(k, k + k);
    }
    Iterator it = dbm.makeIterator();
    expect(Status.SUCCESS, it.first());
    at(it, "a");
    expect(Status.SUCCESS, it.last());
    at(it, "d");
    expect(Status.SUCCESS, it.previous());
    at(it, "c");
    expect(Status.SUCCESS, it.jump("bb"));
    at(it, "c");
    expect(Status.SUCCESS, it.jump("a".getBytes(UTF_8)));
    at(it, "a");
    expect(Status.SUCCESS, it.jumpLower("c", false));
    at(it, "b");
    expect(Status.SUCCESS, it.jumpLower("c".getBytes(UTF_8), true));
    at(it, "c");
    expect(Status.SUCCESS, it.jumpUpper("a".getBytes(UTF_8), true));
    at(it, "a");
    expect(Status.SUCCESS, it.jumpUpper("b", false));
    assertEquals("c", it.getKeyString());
    assertArrayEquals("c".getBytes(UTF_8), it.getKey());
    expect(Status.SUCCESS, it.set("C"));
    assertEquals("C", it.getValueString());
    expect(Status.SUCCESS, it.set("CC".getBytes(UTF_8)));
    assertArrayEquals("CC".getBytes(UTF_8), it.getValue());
    expect(Status.SUCCESS, it.remove());
    at(it, "d");
    byte[][] raw = it.get();
    assertArrayEquals("d".getBytes(UTF_8), raw[0]);
    assertArrayEquals("dd".getBytes(UTF_8), raw[1]);
    expect(Status.SUCCESS, it.next());
    Status status = new Status();
    assertNull(it.get(status));
    expect(Status.NOT_FOUND_ERROR, status);
    assertNull(it.getKey());
    assertNull(it.getValueString());
    expect(Status.NOT_FOUND_ERROR, it.next());

    expect(Status.SUCCESS, it.first());
    List<String> keys = new ArrayList<>();
    while (true) {
      String[] rec = it.stepString(status);
      if (rec == null) {
        expect(Status.NOT_FOUND_ERROR, status);
        break;
      }
      keys.add(rec[0] + "=" + rec[1]);
    }
    assertEquals(List.of("a=aa", "b=bb", "d=dd"), keys);
    expect(Status.SUCCESS, it.first());
    assertArrayEquals(new byte[][] {"a".getBytes(UTF_8), "aa".getBytes(UTF_8)}, it.step());
    assertArrayEquals(new String[] {"b", "bb"}, it.stepString());
    assertArrayEquals(new String[] {"d", "dd"}, it.getString());

    it.destruct();
    expect(Status.PRECONDITION_ERROR, it.first());
    expect(Status.PRECONDITION_ERROR, it.jump("a"));
    assertNull(it.get(status));
    expect(Status.PRECONDITION_ERROR, status);
    it.destruct();
  }

  @Test
  void hashAndOutlivingTheDatabase() {
    expect(Status.SUCCESS, dbm.open(dir.resolve("casket.tkh").toString(), true, "truncate=true"));
    dbm.set("x", "xx");
    dbm.set("y", "yy");
    Iterator it = dbm.makeIterator();
    expect(Status.NOT_IMPLEMENTED_ERROR, it.last());
    expect(Status.NOT_FOUND_ERROR, it.jump("absent"));
    expect(Status.SUCCESS, it.jump("y"));
    at(it, "y");
    List<String> keys = new ArrayList<>();
    expect(Status.SUCCESS, it.first());
    for (String[] rec = it.stepString(); rec != null; rec = it.stepString()) {
      keys.add(rec[0]);
    }
    keys.sort(null);
    assertEquals(List.of("x", "y"), keys);
    // Close invalidates the iterator, as in Tkrzw: PRECONDITION_ERROR, no crash.
    expect(Status.SUCCESS, dbm.close());
    expect(Status.PRECONDITION_ERROR, it.first());
    assertNull(it.stepString());
    it.destruct();
  }

  @Test
  void emptyDatabase() {
    expect(Status.SUCCESS, dbm.open("*", true));
    Iterator it = dbm.makeIterator();
    expect(Status.SUCCESS, it.first());
    assertNull(it.step());
    it.destruct();
  }
}
