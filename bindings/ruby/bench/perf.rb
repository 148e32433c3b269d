# frozen_string_literal: true

# Seed 004's measurement in Ruby, the same loop as scripts/bench-bindings/perf.c:
# N records with keys and values "%08d", set then get, by T threads (thread t
# takes every T-th index). Runs on memstored's binding, or with --tkrzw on
# tkrzw-ruby (its API is the same, which is the point: only the module differs).
#
#   ruby -I bindings/ruby/lib bindings/ruby/bench/perf.rb [--tkrzw] PATH PARAMS N THREADS
#
# PARAMS is "k=v,k=v". Prints "set QPS", "get QPS" and the max RSS in KiB,
# then each phase's process CPU time (user + system, all threads) in
# nanoseconds a call: unlike QPS, not moved by other jobs on the machine.
tkrzw = ARGV.delete("--tkrzw")
abort "usage: perf.rb [--tkrzw] PATH PARAMS N THREADS" unless ARGV.size == 4
path, params, n, threads = ARGV
n = Integer(n)
threads = Integer(threads)
if tkrzw
  require "tkrzw"
  lib = Tkrzw
else
  require "memstored"
  lib = Memstored
end

open_params = params.split(",").to_h { |kv| kv.split("=", 2) }
dbm = lib::DBM.new
dbm.open(path, true, **open_params.transform_keys(&:to_sym)).or_die

def phase(n, threads, cpu_per_call)
  start = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  cpu = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)
  failures = Array.new(threads) do |t|
    Thread.new do
      bad = 0
      t.step(n - 1, threads) { |i| bad += 1 unless yield(format("%08d", i)) }
      bad
    end
  end.sum(&:value)
  abort "#{failures} failed calls" if failures.positive?
  cpu_per_call << ((Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID) - cpu) * 1e9 / n)
  n / (Process.clock_gettime(Process::CLOCK_MONOTONIC) - start)
end

cpu_ns = []
set_qps = phase(n, threads, cpu_ns) { |key| dbm.set(key, key).ok? }
get_qps = phase(n, threads, cpu_ns) { |key| !dbm.get(key).nil? }
abort "count #{dbm.count}, want #{n}" unless dbm.count == n
rss_kib = File.read("/proc/self/status")[/^VmHWM:\s+(\d+)/, 1].to_i
dbm.close.or_die
printf("set %.0f\nget %.0f\nrss_kib %d\n", set_qps, get_qps, rss_kib)
printf("set_cpu_ns %.0f\nget_cpu_ns %.0f\n", *cpu_ns)
