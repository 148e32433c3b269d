package memstored;

import static memstored.DBMTest.expect;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class IndexTest {
  @TempDir Path dir;
  private final Index index = new Index();

  @AfterEach
  void destruct() {
    index.destruct();
  }

  @Test
  void pairsAndValues() {
    String path = dir.resolve("casket.tkt").toString();
    expect(Status.SUCCESS, index.open(path, true, "truncate=true,num_buckets=100"));
    assertTrue(index.toString().startsWith("memstored.Index("), index.toString());
    assertFalse(index.contains("single", "1"));
    expect(Status.SUCCESS, index.add("single", "1"));
    expect(Status.SUCCESS, index.add("single", "2"));
    expect(Status.SUCCESS, index.add("double", "11"));
    expect(Status.SUCCESS, index.add("triple", "222"));
    assertTrue(index.contains("single", "1"));
    assertArrayEquals(new String[] {"1", "2"}, index.getValues("single", 0));
    assertArrayEquals(new String[] {"1"}, index.getValues("single", 1));
    assertEquals(0, index.getValues("foo", 0).length);
    expect(Status.SUCCESS, index.remove("single", "1"));
    assertFalse(index.remove("triple", "x").isOK());
    assertEquals(3, index.count());
    assertEquals(path, index.getFilePath());
    expect(Status.SUCCESS, index.synchronize(false));
    expect(Status.SUCCESS, index.rebuild());
    assertEquals(3, index.count());
    assertTrue(index.isWritable());
    expect(Status.SUCCESS, index.clear());
    assertEquals(0, index.count());
    expect(Status.SUCCESS, index.close());
    assertFalse(index.isOpen());
    expect(Status.PRECONDITION_ERROR, index.add("k", "v"));
  }

  @Test
  void iteratorWalksInOrder() {
    expect(Status.SUCCESS, index.open(dir.resolve("i.tkt").toString(), true, "truncate=true"));
    index.add("first", "1");
    index.add("second", "22");
    index.add("third", "333");
    IndexIterator it = index.makeIterator();
    assertNull(it.get());
    it.first();
    assertArrayEquals(new String[] {"first", "1"}, it.getString());
    assertTrue(it.toString().startsWith("memstored.IndexIterator("), it.toString());
    it.next();
    assertArrayEquals(new String[] {"second", "22"}, it.getString());
    it.next();
    it.next();
    assertNull(it.getString());
    it.last();
    assertArrayEquals(new String[] {"third", "333"}, it.getString());
    it.previous();
    it.previous();
    assertArrayEquals(new String[] {"first", "1"}, it.getString());
    it.previous();
    assertNull(it.getString());
    it.jump("second", "");
    assertArrayEquals(new String[] {"second", "22"}, it.getString());
    it.destruct();
    assertNull(it.get());
  }
}
