# frozen_string_literal: true

module Memstored
  # The result of a call AsyncDBM runs on its threads, as tkrzw-ruby's
  # Future: `wait(timeout = nil)` -> true once done, `get` -> the result
  # (waiting for it). A Status for calls that return one; [Status, value]
  # for get, increment, search and get_multi; [Status, key, value] for pop_first.
  class Future
    def initialize
      @lock = Mutex.new
      @done = ConditionVariable.new
      @finished = false
      @result = nil
    end

    # Called by the worker that ran the call.
    def finish(result)
      @lock.synchronize do
        @result = result
        @finished = true
        @done.broadcast
      end
    end

    # Waits at most timeout seconds (nil or negative: until done); true when done.
    def wait(timeout = nil)
      @lock.synchronize do
        unless @finished
          forever = timeout.nil? || timeout.negative?
          deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + timeout.to_f unless forever
          until @finished
            left = forever ? nil : deadline - Process.clock_gettime(Process::CLOCK_MONOTONIC)
            break if left && left <= 0

            @done.wait(@lock, left)
          end
        end
        @finished
      end
    end

    # The result, once the call is done.
    def get
      wait
      @result
    end

    # Tkrzw frees the native future here; this one is collected as usual.
    def destruct
      nil
    end

    def to_s
      "Future:#{format('%#x', object_id)}"
    end

    def inspect
      "#<Memstored::Future:#{self}>"
    end
  end

  # tkrzw-ruby's AsyncDBM: a DBM's calls run by a pool of threads, each
  # returning a Future at once. AsyncDBM.new(dbm, num_worker_threads).
  class AsyncDBM
    def initialize(dbm, num_worker_threads)
      @dbm = dbm
      @queue = Queue.new
      @workers = Array.new([num_worker_threads.to_i, 1].max) do
        Thread.new do
          while (job = @queue.pop)
            job.call
          end
        end
      end
    end

    # Stops the threads once the calls already queued are done.
    def destruct
      workers = @workers
      @workers = nil
      return nil unless workers

      workers.each { @queue.push(nil) }
      workers.each(&:join)
      nil
    end

    # -> [Status, value]; the value is "" when there is none (as Tkrzw's).
    def get(key)
      run do
        status = Status.new
        value = @dbm.get(key, status)
        [status, value || ""]
      end
    end

    # -> [Status, Hash of the records found]; NOT_FOUND_ERROR when some key is absent.
    def get_multi(*keys)
      keys = keys.flatten(1)
      run do
        found = @dbm.get_multi(keys)
        missing = found.size < keys.uniq.size
        [missing ? Status.new(Status::NOT_FOUND_ERROR, "some records are missing") : Status.new, found]
      end
    end

    def set(key, value, overwrite = true)
      run { @dbm.set(key, value, overwrite) }
    end

    def set_multi(overwrite = true, records = nil, **kwrecords)
      run { @dbm.set_multi(overwrite, records, **kwrecords) }
    end

    def remove(key)
      run { @dbm.remove(key) }
    end

    def remove_multi(*keys)
      run { @dbm.remove_multi(*keys) }
    end

    def append(key, value, delim = "")
      run { @dbm.append(key, value, delim) }
    end

    def append_multi(delim = "", records = nil, **kwrecords)
      run { @dbm.append_multi(delim, records, **kwrecords) }
    end

    def compare_exchange(key, expected, desired)
      run { @dbm.compare_exchange(key, expected, desired) }
    end

    # -> [Status, the new number or nil].
    def increment(key, inc = 1, init = 0)
      run do
        status = Status.new
        value = @dbm.increment(key, inc, init, status)
        [status, value]
      end
    end

    def compare_exchange_multi(expected, desired)
      run { @dbm.compare_exchange_multi(expected, desired) }
    end

    def rekey(old_key, new_key, overwrite = true, copying = false)
      run { @dbm.rekey(old_key, new_key, overwrite, copying) }
    end

    # -> [Status, key, value]; "" and "" when there is no record.
    def pop_first
      run do
        status = Status.new
        record = @dbm.pop_first(status)
        record ? [status, record[0], record[1]] : [status, "", ""]
      end
    end

    def push_last(value, wtime = nil)
      run { @dbm.push_last(value, wtime) }
    end

    def clear
      run { @dbm.clear }
    end

    def rebuild(**params)
      run { @dbm.rebuild(**params) }
    end

    def synchronize(hard, **params)
      run { @dbm.synchronize(hard, **params) }
    end

    def copy_file_data(dest_path, sync_hard = false)
      run { @dbm.copy_file_data(dest_path, sync_hard) }
    end

    def export(dest_dbm)
      run { @dbm.export(dest_dbm) }
    end

    def export_to_flat_records(dest_file)
      run { @dbm.export_to_flat_records(dest_file) }
    end

    def import_from_flat_records(src_file)
      run { @dbm.import_from_flat_records(src_file) }
    end

    # -> [Status, the keys found].
    def search(mode, pattern, capacity = 0)
      run do
        [Status.new, @dbm.search(mode, pattern, capacity)]
      rescue StatusException => e
        [e.status, []]
      end
    end

    def to_s
      "AsyncDBM:#{format('%#x', object_id)}"
    end

    def inspect
      "#<Memstored::AsyncDBM:#{self}>"
    end

    private

    # Queues the block; its result (or the failure it raised, as a Status
    # or [Status, ...]) completes the future.
    def run(&block)
      raise StatusException, Status.new(Status::PRECONDITION_ERROR, "destructed object") unless @workers

      future = Future.new
      @queue.push(lambda do
        future.finish(block.call)
      rescue StatusException => e
        future.finish(e.status)
      rescue StandardError => e
        future.finish(Status.new(Status::UNKNOWN_ERROR, "#{e.class}: #{e.message}"))
      end)
      future
    end
  end
end
