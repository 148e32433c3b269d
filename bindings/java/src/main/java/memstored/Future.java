package memstored;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The result of an {@link AsyncDBM} call, as tkrzw-java's {@code Future}: {@link #await} waits
 * for it, {@link #get} waits and gives it. Unlike Tkrzw's, it holds no native resource, so
 * {@link #get} may be called more than once and {@link #destruct} only drops the reference;
 * {@link #toCompletableFuture} gives the standard form for composing.
 */
public class Future<T> {
  private CompletableFuture<T> inner;

  Future(CompletableFuture<T> inner) {
    this.inner = inner;
  }

  /** Forgets the result; later calls of get and await fail with IllegalStateException. */
  public void destruct() {
    inner = null;
  }

  /**
   * Waits for the operation.
   *
   * @param timeout seconds to wait at most; negative: no limit
   * @return true when it is done, false on timeout
   */
  public boolean await(double timeout) {
    CompletableFuture<T> f = live();
    if (timeout < 0) {
      f.join();
      return true;
    }
    try {
      f.get((long) (timeout * 1e9), TimeUnit.NANOSECONDS);
      return true;
    } catch (TimeoutException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return f.isDone();
    } catch (ExecutionException e) {
      return true;
    }
  }

  /** Waits for the operation and gives its result (a Status, or a Status.And). */
  public T get() {
    return live().join();
  }

  /** The underlying CompletableFuture. */
  public CompletableFuture<T> toCompletableFuture() {
    return live();
  }

  @Override
  public String toString() {
    CompletableFuture<T> f = inner;
    if (f == null) {
      return "memstored.Future(destroyed)";
    }
    return "memstored.Future(" + (f.isDone() ? "done" : "pending") + ")";
  }

  private CompletableFuture<T> live() {
    CompletableFuture<T> f = inner;
    if (f == null) {
      throw new IllegalStateException("the future is destructed");
    }
    return f;
  }
}
