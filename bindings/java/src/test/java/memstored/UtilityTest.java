package memstored;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

class UtilityTest {
  @Test
  void constants() {
    assertTrue(Utility.VERSION.length() >= 3);
    assertEquals("Linux", Utility.OS_NAME);
    assertTrue(Utility.PAGE_SIZE >= 4096 && Integer.bitCount(Utility.PAGE_SIZE) == 1);
    assertTrue(Utility.getMemoryCapacity() > 0);
    long usage = Utility.getMemoryUsage();
    assertTrue(usage > 0 && usage < Utility.getMemoryCapacity());
  }

  @Test
  void parseParamsSkipsFieldsWithoutValues() {
    assertEquals(Map.of("key1", "value1", "key2", "v=2"),
        Utility.parseParams("key1=value1,key2=v=2,foo,"));
    assertEquals(Map.of(), Utility.parseParams(""));
  }

  /** The numbers Tkrzw's own tests give for PrimaryHash and SecondaryHash. */
  @Test
  void hashesAreTkrzws() {
    byte[] abc = "abc".getBytes(UTF_8);
    assertEquals(3042090208L, Utility.primaryHash(abc, (1L << 32) - 1));
    assertEquals(-1472843703697547994L, Utility.primaryHash(abc, 0));
    assertEquals(702176507L, Utility.secondaryHash(abc, (1L << 32) - 1));
    assertEquals(1765794342254572867L, Utility.secondaryHash(abc, 0));
    // Keys of 8 bytes and more take the word loop; buckets stay in range.
    for (int n = 0; n < 40; n++) {
      byte[] key = "k".repeat(n).getBytes(UTF_8);
      long b = Utility.primaryHash(key, 1000);
      assertTrue(b >= 0 && b < 1000);
      assertTrue(Utility.secondaryHash(key, 7) < 7);
    }
  }

  @Test
  void editDistanceCountsCodePoints() {
    assertEquals(0, Utility.editDistanceLev("", ""));
    assertEquals(1, Utility.editDistanceLev("ac", "abc"));
    assertEquals(1, Utility.editDistanceLev("あいう", "あう"));
    assertEquals(3, Utility.editDistanceLev("kitten", "sitting"));
    assertEquals(1, Utility.editDistanceLev("😀", "😁"));
  }

  @Test
  void bigEndianForms() {
    byte[] seq = Utility.serializeInt(-123456);
    assertEquals(8, seq.length);
    assertArrayEquals(new byte[] {-1, -1, -1, -1, -1, -2, 29, -64}, seq);
    assertEquals(-123456, Utility.deserializeInt(seq));
    assertEquals(258, Utility.deserializeInt(new byte[] {1, 2}));
    byte[] f = Utility.serializeFloat(-123.456);
    assertEquals(8, f.length);
    assertEquals(-123.456, Utility.deserializeFloat(f));
    assertEquals(1.5, Utility.deserializeFloat(new byte[] {0x3f, (byte) 0xc0, 0, 0}));
  }
}
