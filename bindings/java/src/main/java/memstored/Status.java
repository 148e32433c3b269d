package memstored;

/**
 * The result of an operation: a code (Tkrzw's status codes, with the same names and numbers) and
 * a message. Mutable, as in tkrzw-java, so that calls like {@link DBM#get(String, Status)} can
 * report through an argument.
 */
public class Status {
  /** Tkrzw's status codes; {@link #ordinal()} is the code's number in the C API. */
  public enum Code {
    SUCCESS,
    UNKNOWN_ERROR,
    SYSTEM_ERROR,
    NOT_IMPLEMENTED_ERROR,
    PRECONDITION_ERROR,
    INVALID_ARGUMENT_ERROR,
    CANCELED_ERROR,
    NOT_FOUND_ERROR,
    PERMISSION_ERROR,
    INFEASIBLE_ERROR,
    DUPLICATION_ERROR,
    BROKEN_DATA_ERROR,
    NETWORK_ERROR,
    APPLICATION_ERROR;

    private static final Code[] BY_NUMBER = values();

    /** The code of a number; UNKNOWN_ERROR for a number that names none. */
    public static Code valueOf(int num) {
      return num >= 0 && num < BY_NUMBER.length ? BY_NUMBER[num] : UNKNOWN_ERROR;
    }
  }

  public static final Code SUCCESS = Code.SUCCESS;
  public static final Code UNKNOWN_ERROR = Code.UNKNOWN_ERROR;
  public static final Code SYSTEM_ERROR = Code.SYSTEM_ERROR;
  public static final Code NOT_IMPLEMENTED_ERROR = Code.NOT_IMPLEMENTED_ERROR;
  public static final Code PRECONDITION_ERROR = Code.PRECONDITION_ERROR;
  public static final Code INVALID_ARGUMENT_ERROR = Code.INVALID_ARGUMENT_ERROR;
  public static final Code CANCELED_ERROR = Code.CANCELED_ERROR;
  public static final Code NOT_FOUND_ERROR = Code.NOT_FOUND_ERROR;
  public static final Code PERMISSION_ERROR = Code.PERMISSION_ERROR;
  public static final Code INFEASIBLE_ERROR = Code.INFEASIBLE_ERROR;
  public static final Code DUPLICATION_ERROR = Code.DUPLICATION_ERROR;
  public static final Code BROKEN_DATA_ERROR = Code.BROKEN_DATA_ERROR;
  public static final Code NETWORK_ERROR = Code.NETWORK_ERROR;
  public static final Code APPLICATION_ERROR = Code.APPLICATION_ERROR;

  private Code code;
  private String message;

  /** SUCCESS with no message. */
  public Status() {
    this(Code.SUCCESS, "");
  }

  public Status(Code code) {
    this(code, "");
  }

  public Status(Code code, String message) {
    this.code = code;
    this.message = message == null ? "" : message;
  }

  public Code getCode() {
    return code;
  }

  public String getMessage() {
    return message;
  }

  public void set(Code code, String message) {
    this.code = code;
    this.message = message == null ? "" : message;
  }

  /** Takes {@code rhs}'s code and message when this one is SUCCESS (keeps the first failure). */
  public void join(Status rhs) {
    if (code == Code.SUCCESS) {
      code = rhs.code;
      message = rhs.message;
    }
  }

  /** "CODE" or "CODE: message". */
  @Override
  public String toString() {
    return message.isEmpty() ? code.name() : code.name() + ": " + message;
  }

  /** True when the codes are the same (messages are not compared, as in Tkrzw). */
  public boolean equals(Status rhs) {
    return rhs != null && rhs.code == code;
  }

  public boolean equals(Code rhs) {
    return rhs == code;
  }

  @Override
  public boolean equals(Object rhs) {
    return rhs instanceof Status s && equals(s);
  }

  @Override
  public int hashCode() {
    return code.hashCode();
  }

  @Override
  public Status clone() {
    return new Status(code, message);
  }

  public boolean isOK() {
    return code == Code.SUCCESS;
  }

  /** Throws a {@link StatusException} unless this is SUCCESS. */
  public void orDie() {
    if (code != Code.SUCCESS) {
      throw new StatusException(this);
    }
  }

  /** A status and a value, as the calls that return both give them. */
  public static class And<T> {
    public Status status;
    public T value;

    public And() {}

    And(Status status, T value) {
      this.status = status;
      this.value = value;
    }
  }
}
