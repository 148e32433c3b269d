package memstored;

import static java.nio.charset.StandardCharsets.UTF_8;
import static memstored.DBMTest.expect;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProcessTest {
  @TempDir Path dir;
  private final DBM dbm = new DBM();

  @BeforeEach
  void open() {
    expect(Status.SUCCESS, dbm.open(dir.resolve("casket.tkt").toString(), true, "truncate=true"));
  }

  @AfterEach
  void destruct() {
    dbm.destruct();
  }

  @Test
  void processSetsRemovesAndLeaves() {
    expect(Status.SUCCESS, dbm.process("abc", (k, v) -> null, true));
    assertNull(dbm.get("abc"));
    expect(Status.SUCCESS, dbm.process("abc", (k, v) -> "ABCDE".getBytes(UTF_8), true));
    assertEquals("ABCDE", dbm.get("abc"));
    List<String> seen = new ArrayList<>();
    expect(Status.SUCCESS, dbm.process("abc", (k, v) -> {
      seen.add(new String(k, UTF_8) + "=" + new String(v, UTF_8));
      return "ignored".getBytes(UTF_8);
    }, false));
    assertEquals(List.of("abc=ABCDE"), seen);
    assertEquals("ABCDE", dbm.get("abc"), "a read-only process changes nothing");
    // An empty array of one's own is an empty value, not REMOVE.
    expect(Status.SUCCESS, dbm.process("abc", (k, v) -> new byte[0], true));
    assertEquals("", dbm.get("abc"));
    expect(Status.SUCCESS, dbm.process("abc", (k, v) -> RecordProcessor.REMOVE, true));
    assertNull(dbm.get("abc"));
    expect(Status.SUCCESS, dbm.process("abc", (k, v) -> {
      assertNull(v);
      return null;
    }, false));
  }

  /** A processor's exception comes out of the call, and the record is left as it was. */
  @Test
  void processorExceptionIsRethrown() {
    dbm.set("k", "v");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> dbm.process("k", (k, v) -> {
          throw new IllegalArgumentException("from the processor");
        }, true));
    assertEquals("from the processor", e.getMessage());
    assertEquals("v", dbm.get("k"));
    assertThrows(AssertionError.class, () -> dbm.processEach((k, v) -> {
      throw new AssertionError("each");
    }, true));
    assertEquals("v", dbm.get("k"));
  }

  @Test
  void processEachCallsBeforeAndAfter() {
    for (int i = 0; i < 10; i++) {
      final int n = i;
      expect(Status.SUCCESS, dbm.process(Integer.toString(i),
          (k, v) -> Integer.toString(n * n).getBytes(UTF_8), true));
    }
    int[] counts = new int[2];
    expect(Status.SUCCESS, dbm.processEach((k, v) -> {
      counts[k == null ? 0 : 1]++;
      return null;
    }, false));
    assertArrayEquals(new int[] {2, 10}, counts);
    expect(Status.SUCCESS, dbm.processEach((k, v) -> {
      if (k == null) {
        return null;
      }
      int root = (int) Math.sqrt(Integer.parseInt(new String(v, UTF_8)));
      return Integer.toString(root).getBytes(UTF_8);
    }, true));
    expect(Status.SUCCESS, dbm.processEach((k, v) -> {
      if (k == null) {
        return null;
      }
      assertArrayEquals(k, v);
      return RecordProcessor.REMOVE;
    }, true));
    assertEquals(0, dbm.count());
  }

  @Test
  void processMultiRunsInOrder() {
    RecordProcessor.WithKey[] first = {
        new RecordProcessor.WithKey("one", (k, v) -> "hop".getBytes(UTF_8)),
        new RecordProcessor.WithKey("two", (k, v) -> "step".getBytes(UTF_8)),
        new RecordProcessor.WithKey("three", (k, v) -> "jump".getBytes(UTF_8)),
    };
    expect(Status.SUCCESS, dbm.processMulti(first, true));
    RecordProcessor twofold = (k, v) ->
        v == null ? "x".getBytes(UTF_8) : (new String(v, UTF_8) + new String(v, UTF_8)).getBytes(UTF_8);
    RecordProcessor.WithKey[] second = {
        new RecordProcessor.WithKey("one", (k, v) -> RecordProcessor.REMOVE),
        new RecordProcessor.WithKey("two", (k, v) -> RecordProcessor.REMOVE),
        new RecordProcessor.WithKey("three", twofold),
        new RecordProcessor.WithKey("four", twofold),
        new RecordProcessor.WithKey("three", twofold),
        new RecordProcessor.WithKey("four", twofold),
    };
    expect(Status.SUCCESS, dbm.processMulti(second, true));
    assertEquals(2, dbm.count());
    assertEquals("jumpjumpjumpjump", dbm.get("three"));
    assertEquals("xx", dbm.get("four"));
  }

  @Test
  void processFirstTakesTheFirstRecord() {
    expect(Status.NOT_FOUND_ERROR, dbm.processFirst((k, v) -> null, true));
    dbm.set("b", "2");
    dbm.set("a", "1");
    List<String> seen = new ArrayList<>();
    expect(Status.SUCCESS, dbm.processFirst((k, v) -> {
      seen.add(new String(k, UTF_8));
      return RecordProcessor.REMOVE;
    }, true));
    assertEquals(List.of("a"), seen);
    assertNull(dbm.get("a"));
  }

  @Test
  void notOpened() {
    DBM closed = new DBM();
    expect(Status.PRECONDITION_ERROR, closed.process("k", (k, v) -> null, true));
    expect(Status.PRECONDITION_ERROR, closed.processEach((k, v) -> null, true));
  }
}
