package memstored

import (
	"bytes"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"sync"
	"testing"
)

func open(t *testing.T, name string, params interface{}) *DBM {
	t.Helper()
	dbm := NewDBM()
	path := name
	if name != "*" && name != "+" {
		path = filepath.Join(t.TempDir(), name)
	}
	if st := dbm.Open(path, true, params); !st.IsOK() {
		t.Fatalf("Open %s: %v", path, st)
	}
	t.Cleanup(func() { dbm.Destruct() })
	return dbm
}

func must(t *testing.T, st *Status, want StatusCode) {
	t.Helper()
	if !st.Equals(want) {
		t.Fatalf("status %v, want %s", st, StatusCodeName(want))
	}
}

func TestOpenParamsAndClose(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "casket.tkh")
	dbm := NewDBM()
	must(t, dbm.Open(path, true, map[string]string{"num_buckets": "100"}), StatusSuccess)
	must(t, dbm.Set("k", "v", true), StatusSuccess)
	must(t, dbm.Close(), StatusSuccess)
	must(t, dbm.Close(), StatusPreconditionError)
	// The record survives a reopen; truncate=true starts empty.
	must(t, dbm.Open(path, false, nil), StatusSuccess)
	if dbm.GetStrSimple("k", "*") != "v" || dbm.IsWritable() {
		t.Fatal("reopen lost the record or is writable")
	}
	must(t, dbm.Set("k", "w", true), StatusPreconditionError)
	must(t, dbm.Close(), StatusSuccess)
	must(t, dbm.Open(path, true, "truncate=true"), StatusSuccess)
	if n := dbm.CountSimple(); n != 0 {
		t.Fatalf("truncate left %d records", n)
	}
	dbm.Close()
	st := dbm.Open(path, true, "colour=blue")
	must(t, st, StatusInvalidArgumentError)
	if st.GetMessage() == "" {
		t.Fatal("a failure carries the library's message")
	}
	must(t, dbm.Open(path, true, 42), StatusInvalidArgumentError)
	if _, st := NewDBM().Get("k"); !st.Equals(StatusPreconditionError) {
		t.Fatal("an unopened handle answers PRECONDITION_ERROR")
	}
}

func TestRecords(t *testing.T) {
	dbm := open(t, "casket.tkh", "truncate=true,num_buckets=100")
	must(t, dbm.Set("first", "hop", true), StatusSuccess)
	must(t, dbm.Set([]byte("first"), "jump", false), StatusDuplicationError)
	must(t, dbm.Set(7, 3000, true), StatusSuccess)
	if v, st := dbm.Get("7"); !st.IsOK() || string(v) != "3000" {
		t.Fatalf("numbers are stored as text: %q %v", v, st)
	}
	if v, st := dbm.GetStr("first"); !st.IsOK() || v != "hop" {
		t.Fatalf("GetStr %q %v", v, st)
	}
	if _, st := dbm.Get("none"); !st.Equals(StatusNotFoundError) {
		t.Fatalf("absent: %v", st)
	}
	if !bytes.Equal(dbm.GetSimple("none", []byte("d")), []byte("d")) || dbm.GetStrSimple("none", 5) != "5" {
		t.Fatal("defaults")
	}
	// Empty and binary keys and values round-trip.
	must(t, dbm.Set("", "", true), StatusSuccess)
	if v, st := dbm.Get(""); !st.IsOK() || v == nil || len(v) != 0 {
		t.Fatalf("empty value: %q %v", v, st)
	}
	// Values at, just past and far past the size a get copies on the
	// stack come back whole (the larger ones through the allocating call).
	for _, size := range []int{inlineValue, inlineValue + 1, 100000} {
		want := bytes.Repeat([]byte{'v', 0}, size)[:size]
		must(t, dbm.Set("big", want, true), StatusSuccess)
		if v, st := dbm.Get("big"); !st.IsOK() || !bytes.Equal(v, want) {
			t.Fatalf("Get of %d bytes: %d bytes, %v", size, len(v), st)
		}
		if v, st := dbm.GetStr("big"); !st.IsOK() || v != string(want) {
			t.Fatalf("GetStr of %d bytes: %d bytes, %v", size, len(v), st)
		}
	}
	if v, st := dbm.GetStr("none"); !st.Equals(StatusNotFoundError) || v != "" {
		t.Fatalf("GetStr of an absent key: %q %v", v, st)
	}
	must(t, dbm.Remove("big"), StatusSuccess)
	must(t, dbm.Set([]byte{0, 1, 0}, []byte{9, 0, 9}, true), StatusSuccess)
	if v := dbm.GetSimple([]byte{0, 1, 0}, nil); !bytes.Equal(v, []byte{9, 0, 9}) {
		t.Fatalf("binary: %v", v)
	}
	must(t, dbm.Append("first", "step", ","), StatusSuccess)
	must(t, dbm.Append("new", "x", ","), StatusSuccess)
	if dbm.GetStrSimple("first", "") != "hop,step" || dbm.GetStrSimple("new", "") != "x" {
		t.Fatal("Append")
	}
	if n, st := dbm.Increment("n", 5, 100); !st.IsOK() || n != 105 {
		t.Fatalf("Increment %d %v", n, st)
	}
	if _, st := dbm.Increment("first", 1, 0); !st.Equals(StatusInfeasibleError) {
		t.Fatalf("Increment of text: %v", st)
	}
	must(t, dbm.CompareExchange("cx", "a", "b"), StatusInfeasibleError)
	must(t, dbm.CompareExchange("cx", nil, ""), StatusSuccess)
	if v, st := dbm.Get("cx"); !st.IsOK() || len(v) != 0 {
		t.Fatal("an empty desired value is a value, not a removal")
	}
	must(t, dbm.CompareExchange("cx", "", nil), StatusSuccess)
	must(t, dbm.Remove("cx"), StatusNotFoundError)

	if old, st := dbm.SetAndGet("sg", "1", true); !st.IsOK() || old != nil {
		t.Fatalf("SetAndGet on absent: %q %v", old, st)
	}
	if old, st := dbm.SetAndGetStr("sg", "2", false); !st.Equals(StatusDuplicationError) || *old != "1" {
		t.Fatalf("SetAndGet without overwrite: %v", st)
	}
	if old, st := dbm.RemoveAndGetStr("sg"); !st.IsOK() || *old != "1" {
		t.Fatalf("RemoveAndGet: %v", st)
	}
	if old, st := dbm.RemoveAndGet("sg"); !st.Equals(StatusNotFoundError) || old != nil {
		t.Fatalf("RemoveAndGet absent: %v", st)
	}

	must(t, dbm.SetMultiStr(map[string]string{"a": "1", "b": "2"}, true), StatusSuccess)
	must(t, dbm.SetMulti(map[string][]byte{"c": []byte("3"), "a": []byte("9")}, false), StatusDuplicationError)
	got := dbm.GetMultiStr([]string{"a", "b", "c", "zz"})
	if !reflect.DeepEqual(got, map[string]string{"a": "1", "b": "2", "c": "3"}) {
		t.Fatalf("GetMulti: %v", got)
	}
	if m := dbm.GetMulti([]string{"b"}); string(m["b"]) != "2" || len(m) != 1 {
		t.Fatalf("GetMulti bytes: %v", m)
	}
	if n := dbm.CountSimple(); n != 9 {
		t.Fatalf("Count %d", n)
	}
	must(t, dbm.RemoveMulti([]string{"a", "b", "zz"}), StatusNotFoundError)
	if dbm.Check("a") || !dbm.Check("c") {
		t.Fatal("RemoveMulti removes the present keys")
	}
	must(t, dbm.Synchronize(true, nil), StatusSuccess)
	must(t, dbm.Rebuild(nil), StatusSuccess)
	if rebuild, st := dbm.ShouldBeRebuilt(); !st.IsOK() || rebuild {
		t.Fatal("a freshly rebuilt file needs no rebuild")
	}
	if props := dbm.Inspect(); props["class"] != "HashDBM" || props["num_records"] != "7" {
		t.Fatalf("Inspect: %v", props)
	}
	if !dbm.IsOpen() || !dbm.IsWritable() || dbm.IsOrdered() {
		t.Fatal("flags")
	}
	must(t, dbm.Clear(), StatusSuccess)
	if n, st := dbm.Count(); !st.IsOK() || n != 0 {
		t.Fatalf("Clear left %d", n)
	}
}

func TestCompareExchangeMulti(t *testing.T) {
	dbm := open(t, "+", nil)
	must(t, dbm.SetMultiStr(map[string]string{"Alice": "3000", "Bob": "1000"}, false), StatusSuccess)
	stale := []KeyValueStrPair{{"Alice", "2999"}, {"Bob", "1000"}}
	after := []KeyValueStrPair{{"Alice", "2500"}, {"Bob", "1500"}}
	must(t, dbm.CompareExchangeMultiStr(stale, after), StatusInfeasibleError)
	if dbm.GetStrSimple("Alice", "") != "3000" {
		t.Fatal("a failed exchange changed a record")
	}
	before := []KeyValueStrPair{{"Alice", "3000"}, {"Bob", "1000"}}
	must(t, dbm.CompareExchangeMultiStr(before, after), StatusSuccess)
	// nil values: Carol must be absent; Bob is removed.
	must(t, dbm.CompareExchangeMulti(
		[]KeyValuePair{{[]byte("Carol"), nil}},
		[]KeyValuePair{{[]byte("Carol"), []byte("1")}, {[]byte("Bob"), nil}}), StatusSuccess)
	if dbm.Check("Bob") || dbm.GetStrSimple("Carol", "") != "1" {
		t.Fatal("CompareExchangeMulti with nil values")
	}
	must(t, dbm.CompareExchangeMultiStr(nil, nil), StatusSuccess)
}

func TestSearch(t *testing.T) {
	dbm := open(t, "casket.tkt", "truncate=true")
	for _, k := range []string{"apple", "apricot", "banana", "cherry"} {
		dbm.Set(k, k, true)
	}
	cases := []struct {
		mode, pattern string
		capacity      int
		want          []string
	}{
		{"begin", "ap", 0, []string{"apple", "apricot"}},
		{"contain", "an", 0, []string{"banana"}},
		{"regex", "^.a", 0, []string{"banana"}},
		{"upper", "banana", 0, []string{"banana", "cherry"}},
		{"upperex", "banana", 0, []string{"cherry"}},
		{"lower", "banana", 1, []string{"banana"}},
		{"begin", "", 2, []string{"apple", "apricot"}},
		{"nonsense", "x", 0, []string{}},
	}
	for _, c := range cases {
		if got := dbm.Search(c.mode, c.pattern, c.capacity); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Search(%s, %s, %d) = %v, want %v", c.mode, c.pattern, c.capacity, got, c.want)
		}
	}
}

func TestIterator(t *testing.T) {
	dbm := open(t, "casket.tkt", "truncate=true")
	for _, k := range []string{"a", "b", "c", "d"} {
		dbm.Set(k, k+k, true)
	}
	it := dbm.MakeIterator()
	defer it.Destruct()
	expect := func(wantKey string) {
		t.Helper()
		k, v, st := it.GetStr()
		if !st.IsOK() || k != wantKey || v != wantKey+wantKey {
			t.Fatalf("at %q %q %v, want %q", k, v, st, wantKey)
		}
	}
	must(t, it.First(), StatusSuccess)
	expect("a")
	must(t, it.Last(), StatusSuccess)
	expect("d")
	must(t, it.Previous(), StatusSuccess)
	expect("c")
	must(t, it.Jump("bb"), StatusSuccess)
	expect("c")
	must(t, it.JumpLower("c", false), StatusSuccess)
	expect("b")
	must(t, it.JumpUpper("b", false), StatusSuccess)
	if k, st := it.GetKeyStr(); !st.IsOK() || k != "c" {
		t.Fatalf("GetKey %q", k)
	}
	must(t, it.Set("C"), StatusSuccess)
	if v, st := it.GetValueStr(); !st.IsOK() || v != "C" {
		t.Fatalf("Set then GetValue %q", v)
	}
	must(t, it.Remove(), StatusSuccess)
	expect("d")
	must(t, it.Next(), StatusSuccess)
	if _, _, st := it.Get(); !st.Equals(StatusNotFoundError) {
		t.Fatalf("past the end: %v", st)
	}
	must(t, it.First(), StatusSuccess)
	var keys []string
	for {
		k, _, st := it.StepStr()
		if !st.IsOK() {
			must(t, st, StatusNotFoundError)
			break
		}
		keys = append(keys, k)
	}
	if !reflect.DeepEqual(keys, []string{"a", "b", "d"}) {
		t.Fatalf("Step visited %v", keys)
	}
	var each []string
	for rec := range dbm.EachStr() {
		each = append(each, rec.Key+"="+rec.Value)
	}
	if !reflect.DeepEqual(each, []string{"a=aa", "b=bb", "d=dd"}) {
		t.Fatalf("EachStr: %v", each)
	}
	n := 0
	for rec := range dbm.Each() {
		if !bytes.Equal(rec.Value, append(rec.Key, rec.Key...)) {
			t.Fatalf("Each: %q", rec)
		}
		n++
	}
	if n != 3 {
		t.Fatalf("Each gave %d records", n)
	}
	it.Destruct()
	must(t, it.First(), StatusPreconditionError)
}

// Many goroutines on one handle: atomic counters and transfers, and every
// goroutine reads its own status (the C side keeps it per thread).
func TestConcurrentUse(t *testing.T) {
	dbm := open(t, "casket.tkh", "truncate=true,num_shards=4")
	const workers, rounds = 8, 300
	must(t, dbm.SetMultiStr(map[string]string{"Alice": "100000", "Bob": "0"}, true), StatusSuccess)
	var wg sync.WaitGroup
	errs := make(chan string, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				if _, st := dbm.Increment("counter", 1, 0); !st.IsOK() {
					errs <- st.String()
					return
				}
				if _, st := dbm.Get(fmt.Sprintf("absent-%d-%d", w, i)); !st.Equals(StatusNotFoundError) {
					errs <- "absent key: " + st.String()
					return
				}
				for {
					a, b := dbm.GetStrSimple("Alice", "0"), dbm.GetStrSimple("Bob", "0")
					st := dbm.CompareExchangeMultiStr(
						[]KeyValueStrPair{{"Alice", a}, {"Bob", b}},
						[]KeyValueStrPair{{"Alice", ToString(ToInt(a) - 1)}, {"Bob", ToString(ToInt(b) + 1)}})
					if st.IsOK() {
						break
					}
					if !st.Equals(StatusInfeasibleError) {
						errs <- "transfer: " + st.String()
						return
					}
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	if n, _ := dbm.Increment("counter", 0, 0); n != workers*rounds {
		t.Fatalf("counter %d, want %d", n, workers*rounds)
	}
	a, b := ToInt(dbm.GetStrSimple("Alice", "")), ToInt(dbm.GetStrSimple("Bob", ""))
	if a+b != 100000 || b != workers*rounds {
		t.Fatalf("Alice %d + Bob %d: money was made or lost", a, b)
	}
	keys := dbm.Search("begin", "", 0)
	sort.Strings(keys)
	if !reflect.DeepEqual(keys, []string{"Alice", "Bob", "counter"}) {
		t.Fatalf("keys %v", keys)
	}
}
