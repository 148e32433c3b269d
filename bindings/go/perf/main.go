// Seed 004's measurement in Go: N records with keys and values "%08d",
// set then get, by T goroutines (goroutine t takes every T-th index).
// Usage: perf PATH PARAMS N T; prints "set QPS", "get QPS" and max RSS (KiB).
// scripts/bench-bindings.sh runs it beside the C program.
package main

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"memstored/bindings/go"
)

func phase(dbm *memstored.DBM, n, threads int, get bool) float64 {
	var failures atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for t := 0; t < threads; t++ {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			for i := id; i < n; i += threads {
				key := fmt.Sprintf("%08d", i)
				if get {
					if v, st := dbm.Get(key); !st.IsOK() || len(v) != len(key) {
						failures.Add(1)
					}
				} else if !dbm.Set(key, key, true).IsOK() {
					failures.Add(1)
				}
			}
		}(t)
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	if failures.Load() > 0 {
		fmt.Fprintf(os.Stderr, "%d failed calls\n", failures.Load())
		os.Exit(1)
	}
	return float64(n) / secs
}

func main() {
	if len(os.Args) != 5 {
		fmt.Fprintln(os.Stderr, "usage: perf PATH PARAMS N THREADS")
		os.Exit(2)
	}
	n, err1 := strconv.Atoi(os.Args[3])
	threads, err2 := strconv.Atoi(os.Args[4])
	if err1 != nil || err2 != nil || threads < 1 {
		os.Exit(2)
	}
	dbm := memstored.NewDBM()
	dbm.Open(os.Args[1], true, os.Args[2]).OrDie()
	setQPS := phase(dbm, n, threads, false)
	getQPS := phase(dbm, n, threads, true)
	if c := dbm.CountSimple(); c != int64(n) {
		fmt.Fprintf(os.Stderr, "count %d, want %d\n", c, n)
		os.Exit(1)
	}
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	dbm.Close().OrDie()
	fmt.Printf("set %.0f\nget %.0f\nrss_kib %d\n", setQPS, getQPS, ru.Maxrss)
}
