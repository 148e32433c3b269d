package memstored;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class StatusTest {
  /** Every code's Java name and number match the C library's (memstored_status_code_name). */
  @Test
  void codesMatchTheCLibrary() throws Throwable {
    SymbolLookup lib = SymbolLookup.libraryLookup(
        Path.of(System.getProperty("memstored.library")), Arena.global());
    MethodHandle name = Linker.nativeLinker().downcallHandle(
        lib.find("memstored_status_code_name").orElseThrow(), FunctionDescriptor.of(ADDRESS, JAVA_INT));
    Status.Code[] codes = Status.Code.values();
    assertEquals(14, codes.length);
    for (Status.Code code : codes) {
      MemorySegment p = (MemorySegment) name.invokeExact(code.ordinal());
      assertEquals(p.reinterpret(64).getString(0), code.name());
      assertSame(code, Status.Code.valueOf(code.ordinal()));
    }
    assertEquals(Status.Code.NOT_FOUND_ERROR, Status.Code.valueOf(7));
    assertEquals(Status.Code.APPLICATION_ERROR, Status.Code.valueOf(13));
    assertEquals(Status.Code.UNKNOWN_ERROR, Status.Code.valueOf(99));
    assertEquals(Status.Code.UNKNOWN_ERROR, Status.Code.valueOf(-1));
  }

  @Test
  void behaviour() {
    Status ok = new Status();
    assertTrue(ok.isOK());
    assertEquals("SUCCESS", ok.toString());
    ok.orDie();
    Status bad = new Status(Status.APPLICATION_ERROR, "insufficient value");
    assertFalse(bad.isOK());
    assertEquals("APPLICATION_ERROR: insufficient value", bad.toString());
    StatusException e = assertThrows(StatusException.class, bad::orDie);
    assertSame(bad, e.getStatus());
    assertEquals("APPLICATION_ERROR: insufficient value", e.getMessage());
    assertTrue(bad.equals(Status.APPLICATION_ERROR));
    assertTrue(bad.equals(new Status(Status.APPLICATION_ERROR)), "messages are not compared");
    assertEquals(bad, new Status(Status.APPLICATION_ERROR, "other"));
    assertEquals(bad.hashCode(), new Status(Status.APPLICATION_ERROR).hashCode());
    assertNotEquals(bad, ok);
    Status copy = bad.clone();
    copy.set(Status.NOT_FOUND_ERROR, "gone");
    assertEquals(Status.APPLICATION_ERROR, bad.getCode(), "clone is a copy");
    assertEquals("gone", copy.getMessage());
    // join keeps the first failure.
    Status joined = new Status();
    joined.join(new Status(Status.NOT_FOUND_ERROR, "a"));
    joined.join(new Status(Status.SYSTEM_ERROR, "b"));
    assertEquals("NOT_FOUND_ERROR: a", joined.toString());
    assertEquals(Status.SYSTEM_ERROR, new Status(Status.SYSTEM_ERROR).getCode());
    assertEquals("", new Status(Status.SYSTEM_ERROR, null).getMessage());
  }
}
