package memstored;

import java.util.LinkedHashMap;
import java.util.Map;

/** Maps of records as the parallel key and value arrays the multi-record calls pass. */
final class Records {
  private Records() {}

  /** {keys, values} in the map's order; a null value stays null ("no record"). */
  static byte[][][] of(Map<byte[], byte[]> records) {
    byte[][] keys = new byte[records.size()][];
    byte[][] values = new byte[records.size()][];
    int i = 0;
    for (Map.Entry<byte[], byte[]> e : records.entrySet()) {
      keys[i] = e.getKey();
      values[i] = e.getValue();
      i++;
    }
    return new byte[][][] {keys, values};
  }

  /**
   * The records as UTF-8 bytes, in the map's order; a null value stays null and
   * {@link DBM#ANY_STRING} becomes {@link DBM#ANY_BYTES}.
   */
  static Map<byte[], byte[]> utf8(Map<String, String> records) {
    Map<byte[], byte[]> out = new LinkedHashMap<>();
    for (Map.Entry<String, String> e : records.entrySet()) {
      out.put(Native.utf8(e.getKey()), DBM.raw(e.getValue()));
    }
    return out;
  }
}
