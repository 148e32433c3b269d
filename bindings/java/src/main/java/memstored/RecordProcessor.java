package memstored;

import java.nio.charset.StandardCharsets;

/**
 * A callback for {@link DBM#process}, {@link DBM#processMulti} and {@link DBM#processEach}, as
 * tkrzw-java's: it gets the key and the current value (null when the record is absent) and
 * returns what to do: null leaves the record as it is, {@link #REMOVE} removes it, any other
 * array becomes its value.
 */
@FunctionalInterface
public interface RecordProcessor {
  /**
   * Returned to remove the record. Compared by identity: an empty array of one's own sets an
   * empty value instead.
   */
  public static final byte[] REMOVE = new byte[0];

  /**
   * Processes one record.
   *
   * @param key the record's key (null only in processEach's calls before and after the walk)
   * @param value the current value, or null when there is no record
   * @return null to leave it, {@link #REMOVE} to remove it, else the new value
   */
  public byte[] process(byte[] key, byte[] value);

  /** A key and the processor to run on its record, for {@link DBM#processMulti}. */
  public static class WithKey {
    public byte[] key;
    public RecordProcessor processor;

    public WithKey(byte[] key, RecordProcessor processor) {
      this.key = key;
      this.processor = processor;
    }

    public WithKey(String key, RecordProcessor processor) {
      this(key.getBytes(StandardCharsets.UTF_8), processor);
    }
  }
}
