package memstored;

import static java.nio.charset.StandardCharsets.UTF_8;
import static memstored.DBMTest.expect;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileTest {
  @TempDir Path dir;
  private final File file = new File();

  @AfterEach
  void destruct() {
    file.destruct();
  }

  @Test
  void readsWritesAppends() throws Exception {
    String path = dir.resolve("casket.txt").toString();
    expect(Status.SUCCESS, file.open(path, true, "truncate=true"));
    expect(Status.SUCCESS, file.write(5, "12345"));
    expect(Status.SUCCESS, file.write(0, "ABCDE"));
    assertEquals(10, file.append("FGH"));
    assertEquals(13, file.append("IJ"));
    assertEquals(15, file.getSize());
    assertTrue(file.getPath().endsWith("casket.txt"));
    expect(Status.SUCCESS, file.truncate(12));
    expect(Status.SUCCESS, file.synchronize(false));
    assertEquals(12, file.getSize());
    assertEquals("ABCDE12345FG", file.readString(0, 12));
    assertEquals("DE123", file.readString(3, 5));
    byte[] buf = new byte[4];
    expect(Status.SUCCESS, file.read(1, buf, 3));
    assertArrayEquals(new byte[] {'B', 'C', 'D', 0}, buf);
    Status status = new Status();
    assertNull(file.read(1024, 10, status));
    expect(Status.INFEASIBLE_ERROR, status);
    assertTrue(file.toString().startsWith("memstored.File("), file.toString());
    expect(Status.SUCCESS, file.close());
    assertEquals("ABCDE12345FG", Files.readString(Path.of(path), UTF_8));
    expect(Status.PRECONDITION_ERROR, file.close());
    expect(Status.SUCCESS, file.open(path, false));
    expect(Status.PRECONDITION_ERROR, file.open(path, false));
    assertEquals("E12345F", file.readString(4, 7));
    assertTrue(!file.write(0, "x").isOK(), "a read-only file refuses writes");
  }

  @Test
  void flatRecordsRoundTripAndLines() throws Exception {
    DBM dbm = new DBM();
    expect(Status.SUCCESS, dbm.open(dir.resolve("casket.tkh").toString(), true, "truncate=true"));
    for (int i = 1; i <= 100; i++) {
      dbm.set(String.format("%08d", i), Integer.toString(i));
    }
    String dest = dir.resolve("casket.flat").toString();
    expect(Status.SUCCESS, file.open(dest, true, "truncate=true"));
    expect(Status.SUCCESS, dbm.exportToFlatRecords(file));
    expect(Status.SUCCESS, dbm.clear());
    expect(Status.SUCCESS, dbm.importFromFlatRecords(file));
    assertEquals(100, dbm.count());
    assertEquals("42", dbm.get("00000042"));
    file.close();
    String lines = dir.resolve("keys.txt").toString();
    expect(Status.SUCCESS, file.open(lines, true, "truncate=true"));
    expect(Status.SUCCESS, dbm.exportKeysAsLines(file));
    file.close();
    dbm.close();
    assertEquals(100, Files.readAllLines(Path.of(lines)).size());
    expect(Status.SUCCESS, file.open(lines, false));
    assertEquals(12, file.search("contain", "001", 0).length);
    assertEquals(3, file.search("contain", "001", 3).length);
    assertEquals(10, file.search("begin", "0000001", 0).length);
    assertEquals(10, file.search("end", "1", 0).length);
    assertEquals(10, file.search("regex", "^\\d+1$", 0).length);
    assertEquals(3, file.search("edit", "00000100", 3).length);
    StatusException e = assertThrows(StatusException.class, () -> file.search("foo", "0", 3));
    expect(Status.INVALID_ARGUMENT_ERROR, e.getStatus());
  }

  @Test
  void notOpened() {
    expect(Status.PRECONDITION_ERROR, file.write(0, "x"));
    assertEquals(-1, file.getSize());
    assertNull(file.getPath());
    DBM dbm = new DBM();
    expect(Status.SUCCESS, dbm.open(dir.resolve("c.tkh").toString(), true));
    expect(Status.PRECONDITION_ERROR, dbm.exportToFlatRecords(file));
    dbm.close();
  }
}
