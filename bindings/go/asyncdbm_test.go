package memstored

import (
	"path/filepath"
	"sort"
	"sync"
	"testing"
)

func TestAsyncDBMCalls(t *testing.T) {
	dbm := open(t, "casket.tkt", "truncate=true")
	if NewAsyncDBM(NewDBM(), 2) != nil {
		t.Fatal("an adapter over an unopened DBM")
	}
	async := NewAsyncDBM(dbm, 2)
	key := []byte("one")
	f := async.Set(key, "hop", false)
	key[0] = 'X' // the call owns a copy of its arguments
	if !f.Wait(-1) || !f.Get().IsOK() || f.Wait(0) {
		t.Fatal("Set: done once, spent after Get")
	}
	must(t, f.Get(), StatusPreconditionError)
	must(t, async.Set("one", "x", false).Get(), StatusDuplicationError)
	if v, st := async.Get("one").GetStr(); !st.IsOK() || v != "hop" {
		t.Fatalf("Get %q %v", v, st)
	}
	must(t, async.SetMulti(map[string][]byte{"two": []byte("2")}, false).Get(), StatusSuccess)
	must(t, async.AppendMulti(map[string][]byte{"two": []byte("b")}, ":").Get(), StatusSuccess)
	m, st := async.GetMulti([]string{"one", "two", "three"}).GetMapStr()
	must(t, st, StatusNotFoundError)
	if len(m) != 2 || m["two"] != "2:b" {
		t.Fatalf("GetMulti %v", m)
	}
	if n, st := async.Increment("n", 5, 10).GetInt(); !st.IsOK() || n != 15 {
		t.Fatalf("Increment %d %v", n, st)
	}
	must(t, async.CompareExchange("n", AnyString, NilString).Get(), StatusSuccess)
	must(t, async.CompareExchangeMultiStr(
		[]KeyValueStrPair{{"one", "hop"}}, []KeyValueStrPair{{"one", "HOP"}}).Get(), StatusSuccess)
	must(t, async.Rekey("one", "uno", false, false).Get(), StatusSuccess)
	keys, st := async.Search("begin", "", 0).GetArrayStr()
	sort.Strings(keys)
	if !st.IsOK() || len(keys) != 2 || keys[0] != "two" || keys[1] != "uno" {
		t.Fatalf("Search %q %v", keys, st)
	}
	if _, st := async.Search("nosuchmode", "", 0).GetArray(); st.IsOK() {
		t.Fatal("a bad mode fails in the future")
	}
	if k, v, st := async.PopFirst().GetPairStr(); !st.IsOK() || k != "two" || v != "2:b" {
		t.Fatalf("PopFirst %q %q %v", k, v, st)
	}
	must(t, async.PushLast("q", 0).Get(), StatusSuccess)
	copyPath := filepath.Join(t.TempDir(), "copy.tkt")
	must(t, async.CopyFileData(copyPath, false).Get(), StatusSuccess)
	dest := open(t, "*", nil)
	must(t, async.Export(dest).Get(), StatusSuccess)
	if dest.CountSimple() != 2 {
		t.Fatalf("exported %d", dest.CountSimple())
	}
	must(t, async.Clear().Get(), StatusSuccess)
	must(t, async.Rebuild(nil).Get(), StatusSuccess)
	must(t, async.Synchronize(false, nil).Get(), StatusSuccess)
	async.Set("late", "v", true).Destruct() // dropped, still done by Destruct
	async.Destruct()
	async.Destruct()
	if !dbm.Check("late") {
		t.Fatal("Destruct waits for the calls made")
	}
	must(t, async.Set("after", "v", true).Get(), StatusPreconditionError)
}

// Calls made from many goroutines all complete, each with its own result.
func TestAsyncDBMConcurrentCallers(t *testing.T) {
	dbm := open(t, "*", nil)
	async := NewAsyncDBM(dbm, 3)
	defer async.Destruct()
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			futures := make([]*Future, 50)
			for i := range futures {
				futures[i] = async.Increment("n", 1, 0)
			}
			for _, f := range futures {
				if _, st := f.GetInt(); !st.IsOK() {
					t.Error(st)
				}
			}
		}(g)
	}
	wg.Wait()
	if got := dbm.GetStrSimple("n", ""); got != "200" {
		t.Fatalf("n = %s", got)
	}
}
