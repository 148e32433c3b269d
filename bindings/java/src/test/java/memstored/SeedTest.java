package memstored;

import static memstored.DBMTest.expect;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Seed 004's two programs (the hop/step/jump listing and the Alice-to-Bob transfer) written
 * against this API as a tkrzw-java user would, each run twice in a row on the same files
 * (truncate=true) with the seed's results.
 */
class SeedTest {
  @TempDir Path dir;

  private List<String> hopStepJump() {
    DBM dbm = new DBM();
    dbm.open(dir.resolve("casket.tkh").toString(), true, "truncate=true,num_buckets=100").orDie();
    dbm.set("first", "hop", true);
    dbm.set("second", "step", true);
    dbm.set("third", "jump", true);
    List<String> out = new ArrayList<>();
    out.add(dbm.get("first"));
    out.add(dbm.get("second"));
    out.add(dbm.get("third"));
    Iterator iter = dbm.makeIterator();
    iter.first();
    List<String> records = new ArrayList<>();
    for (String[] rec = iter.stepString(); rec != null; rec = iter.stepString()) {
      records.add(rec[0] + " " + rec[1]);
    }
    iter.destruct();
    records.sort(null); // a hash database lists in its own order
    out.addAll(records);
    dbm.close().orDie();
    return out;
  }

  @Test
  void hopStepJumpTwice() {
    List<String> want = List.of("hop", "step", "jump", "first hop", "second step", "third jump");
    assertEquals(want, hopStepJump());
    assertEquals(want, hopStepJump());
  }

  private static Status transfer(DBM dbm, String src, String dest, long amount) {
    long oldSrc = Long.parseLong(dbm.get(src) == null ? "0" : dbm.get(src));
    long oldDest = Long.parseLong(dbm.get(dest) == null ? "0" : dbm.get(dest));
    long newSrc = oldSrc - amount;
    long newDest = oldDest + amount;
    if (newSrc < 0) {
      return new Status(Status.APPLICATION_ERROR, "insufficient value");
    }
    return dbm.compareExchangeMultiString(
        Map.of(src, Long.toString(oldSrc), dest, Long.toString(oldDest)),
        Map.of(src, Long.toString(newSrc), dest, Long.toString(newDest)));
  }

  private List<String> aliceToBob() {
    DBM dbm = new DBM();
    dbm.open(dir.resolve("casket.tkt").toString(), true, "truncate=true,num_buckets=100").orDie();
    dbm.set("Bob", "1000", false).orDie();
    dbm.set("Alice", "3000", false).orDie();
    Status status = null;
    for (int tries = 0; tries < 100; tries++) {
      status = transfer(dbm, "Alice", "Bob", 500);
      if (!status.equals(Status.INFEASIBLE_ERROR)) {
        break;
      }
    }
    status.orDie();
    expect(Status.APPLICATION_ERROR, transfer(dbm, "Bob", "Alice", 1_000_000));
    List<String> out = new ArrayList<>();
    Iterator iter = dbm.makeIterator();
    iter.first();
    while (true) {
      String[] rec = iter.getString();
      if (rec == null) {
        break;
      }
      out.add(rec[0] + " " + rec[1]);
      iter.next();
    }
    iter.destruct();
    dbm.close().orDie();
    return out;
  }

  @Test
  void aliceToBobTwice() {
    List<String> want = List.of("Alice 2500", "Bob 1500");
    assertEquals(want, aliceToBob());
    assertEquals(want, aliceToBob());
  }
}
