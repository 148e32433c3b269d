package memstored;

/** A failed {@link Status}, thrown by {@link Status#orDie()}. */
public class StatusException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final transient Status status;

  public StatusException(Status status) {
    super(status.toString());
    this.status = status;
  }

  public Status getStatus() {
    return status;
  }
}
