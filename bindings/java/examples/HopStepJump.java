import memstored.DBM;
import memstored.Iterator;

/**
 * Seed 004's first program for Java: three records, read back, then every record listed.
 * Run: java --enable-native-access=ALL-UNNAMED -Dmemstored.library=PATH/libmemstored.so
 *        -cp memstored-0.1.0.jar HopStepJump.java [DIR]
 */
public class HopStepJump {
  public static void main(String[] args) {
    String dir = args.length > 0 ? args[0] + "/" : "";
    DBM dbm = new DBM();
    dbm.open(dir + "casket.tkh", true, "truncate=true,num_buckets=100").orDie();
    dbm.set("first", "hop", true);
    dbm.set("second", "step", true);
    dbm.set("third", "jump", true);
    System.out.println(dbm.get("first"));
    System.out.println(dbm.get("second"));
    System.out.println(dbm.get("third"));
    Iterator iter = dbm.makeIterator();
    iter.first();
    for (String[] record = iter.stepString(); record != null; record = iter.stepString()) {
      System.out.println(record[0] + " " + record[1]);
    }
    iter.destruct();
    dbm.close().orDie();
  }
}
