# frozen_string_literal: true

require_relative "helper"

# One open database shared by Ruby threads, as seed 004's benchmark uses it.
class TestThreads < Minitest::Test
  include DBMTest

  THREADS = 4
  PER_THREAD = 2000

  def test_threads_set_and_get_disjoint_keys
    dbm = open_db
    run_threads { |t, i| dbm.set(format("%d-%06d", t, i), "#{t}:#{i}").or_die }
    assert_equal THREADS * PER_THREAD, dbm.count
    run_threads { |t, i| assert_equal "#{t}:#{i}", dbm.get(format("%d-%06d", t, i)) }
  end

  def test_increments_from_threads_are_not_lost
    dbm = open_db
    run_threads { dbm.increment("counter", 1) }
    assert_equal THREADS * PER_THREAD, dbm.increment("counter", 0)
  end

  # Each status is the calling thread's own: a thread's NOT_FOUND never
  # shows up as another thread's result (the C API's last status is per thread).
  def test_statuses_stay_with_their_thread
    dbm = open_db
    dbm["present"] = "1"
    run_threads do |t, _|
      if t.even?
        assert dbm.set("present", "1").ok?
      else
        assert_equal Status::NOT_FOUND_ERROR, dbm.remove("absent-#{t}").code
      end
    end
  end

  # Long calls release the GVL: a thread that only counts keeps counting
  # while one of them is in progress. Were the GVL held, the counter could
  # move between the two reads around the call only when Ruby's 100 ms time
  # slice ran out meanwhile; a released GVL lets it move at once, given the
  # OS runs the ticker's thread during the call. Under a CPU hog it may not
  # for a few calls in a row (CI run 13 failed with 5 tries, beside
  # `stress -c 2`), so each call has 40 tries, each started only once the
  # ticker has just run (it is on a CPU, not waiting for one).
  def test_long_calls_release_the_gvl
    dbm = open_db
    50_000.times { |i| dbm.set(i, "v" * 50) }
    big = "x" * (8 << 20)
    ticks = 0
    done = false
    ticker = Thread.new do
      until done
        ticks += 1
        Thread.pass
      end
    end
    Thread.pass until ticks.positive?
    calls = {
      rebuild: -> { dbm.rebuild.or_die },
      synchronize: -> { dbm.synchronize(true).or_die },
      search: -> { dbm.search("regex", "9$") },
      large_set: -> { dbm.set("big", big).or_die },
      clear: lambda {
        dbm.clear.or_die
        50_000.times { |i| dbm.set(i, "v") }
      }
    }
    calls.each do |name, call|
      moved = 40.times.any? do
        seen = ticks
        Thread.pass while ticks == seen
        before = ticks
        call.call
        ticks > before
      end
      assert moved, "#{name} kept the GVL"
    end
  ensure
    done = true
    ticker&.join
  end

  def run_threads(&block)
    Array.new(THREADS) do |t|
      Thread.new { PER_THREAD.times { |i| block.call(t, i) } }
    end.each(&:join)
  end
end
