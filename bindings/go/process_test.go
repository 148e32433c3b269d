package memstored

import (
	"bytes"
	"sort"
	"sync"
	"testing"
)

func TestProcessAndProcessMulti(t *testing.T) {
	dbm := open(t, "casket.tkh", "truncate=true")
	seen := "unset"
	must(t, dbm.Process("k", func(k, v []byte) interface{} {
		if v == nil {
			seen = "absent " + string(k)
		}
		return nil
	}, true), StatusSuccess)
	if seen != "absent k" || dbm.Check("k") {
		t.Fatalf("a nil answer keeps an absent record absent (%s)", seen)
	}
	must(t, dbm.Process("k", func(k, v []byte) interface{} { return 42 }, true), StatusSuccess)
	must(t, dbm.Process("k", func(k, v []byte) interface{} { return "ignored" }, false), StatusSuccess)
	if dbm.GetStrSimple("k", "*") != "42" {
		t.Fatal("a number stores its decimal text; a read-only Process changes nothing")
	}
	must(t, dbm.Process("k", func(k, v []byte) interface{} { return RemoveString }, true), StatusSuccess)
	if dbm.Check("k") {
		t.Fatal("RemoveString removes")
	}
	double := func(k, v []byte) interface{} {
		if v == nil {
			return "x"
		}
		return append(append([]byte{}, v...), v...)
	}
	must(t, dbm.Set("gone", "g", true), StatusSuccess)
	must(t, dbm.ProcessMulti([]KeyProcPair{
		{"a", double}, {"a", double}, {[]byte("gone"), func([]byte, []byte) interface{} { return RemoveBytes }},
	}, true), StatusSuccess)
	if dbm.GetStrSimple("a", "*") != "xx" || dbm.Check("gone") {
		t.Fatal("a key given twice sees the first processor's result")
	}
	ro := open(t, "*", nil)
	ro.Close()
	if !ro.Process("k", double, true).Equals(StatusPreconditionError) {
		t.Fatal("not open")
	}
}

// Concurrent Process calls on one key each see the value the other left:
// none of the increments is lost.
func TestProcessIsAtomic(t *testing.T) {
	dbm := open(t, "*", nil)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				dbm.Process("n", func(k, v []byte) interface{} { return ToInt(v) + 1 }, true)
			}
		}()
	}
	wg.Wait()
	if got := dbm.GetStrSimple("n", ""); got != "400" {
		t.Fatalf("n = %s, want 400", got)
	}
}

func TestProcessEachAndFirst(t *testing.T) {
	dbm := open(t, "casket.tkt", "truncate=true")
	for i := 1; i <= 5; i++ {
		must(t, dbm.Set(ToString(i), i*i, true), StatusSuccess)
	}
	calls, ends := 0, 0
	must(t, dbm.ProcessEach(func(k, v []byte) interface{} {
		if k == nil {
			ends++
			return nil
		}
		calls++
		switch ToInt(k) % 2 {
		case 0:
			return RemoveBytes
		default:
			return ToInt(k)
		}
	}, true), StatusSuccess)
	if ends != 2 || calls != 5 {
		t.Fatalf("called %d times for records, %d around them", calls, ends)
	}
	got := map[string]string{}
	for rec := range dbm.EachStr() {
		got[rec.Key] = rec.Value
	}
	if len(got) != 3 || got["1"] != "1" || got["3"] != "3" || got["5"] != "5" {
		t.Fatalf("after ProcessEach: %v", got)
	}
	var first []byte
	must(t, dbm.ProcessFirst(func(k, v []byte) interface{} { first = k; return "first" }, true), StatusSuccess)
	if string(first) != "1" || dbm.GetStrSimple("1", "") != "first" {
		t.Fatalf("ProcessFirst saw %q", first)
	}
	must(t, dbm.Clear(), StatusSuccess)
	must(t, dbm.ProcessFirst(func(k, v []byte) interface{} { return nil }, false), StatusNotFoundError)
}

func TestRekey(t *testing.T) {
	dbm := open(t, "casket.tkh", "truncate=true")
	must(t, dbm.Set("old", "v", true), StatusSuccess)
	must(t, dbm.Rekey("old", "new", false, false), StatusSuccess)
	if dbm.Check("old") || dbm.GetStrSimple("new", "") != "v" {
		t.Fatal("moved")
	}
	must(t, dbm.Rekey("new", "copy", false, true), StatusSuccess)
	if dbm.GetStrSimple("new", "") != "v" || dbm.GetStrSimple("copy", "") != "v" {
		t.Fatal("copied")
	}
	must(t, dbm.Rekey("new", "copy", false, false), StatusDuplicationError)
	must(t, dbm.Set("new", "w", true), StatusSuccess)
	must(t, dbm.Rekey("new", "copy", true, false), StatusSuccess)
	if dbm.GetStrSimple("copy", "") != "w" || dbm.Check("new") {
		t.Fatal("overwritten")
	}
	must(t, dbm.Rekey("absent", "x", true, false), StatusNotFoundError)
	must(t, dbm.Rekey("copy", "copy", false, false), StatusDuplicationError)
	must(t, dbm.Rekey("copy", "copy", true, false), StatusSuccess)
	if dbm.GetStrSimple("copy", "") != "w" {
		t.Fatal("rekey onto itself keeps the record")
	}
}

func TestPushLastPopFirstQueue(t *testing.T) {
	dbm := open(t, "casket.tkt", "truncate=true")
	must(t, dbm.PushLast("a", 0), StatusSuccess)
	must(t, dbm.PushLast("b", 0), StatusSuccess)
	must(t, dbm.PushLast("c", 1.5), StatusSuccess)
	keys := []string{}
	for rec := range dbm.EachStr() {
		keys = append(keys, rec.Key)
	}
	want := []string{"\x00\x00\x00\x00\x00\x00\x00\x00", "\x00\x00\x00\x00\x00\x00\x00\x01",
		string(SerializeInt(150000000))}
	if !sort.StringsAreSorted(keys) || len(keys) != 3 || keys[0] != want[0] || keys[1] != want[1] || keys[2] != want[2] {
		t.Fatalf("keys %q, want %q", keys, want)
	}
	must(t, dbm.PushLast("now", -1), StatusSuccess)
	for _, v := range []string{"a", "b", "c", "now"} {
		_, got, st := dbm.PopFirstStr()
		must(t, st, StatusSuccess)
		if got != v {
			t.Fatalf("popped %q, want %q", got, v)
		}
	}
	k, v, st := dbm.PopFirst()
	must(t, st, StatusNotFoundError)
	if k != nil || v != nil {
		t.Fatal("nothing popped from an empty queue")
	}
}

// Two goroutines pop the same queue: every record comes out exactly once.
func TestPopFirstConcurrently(t *testing.T) {
	dbm := open(t, "+", nil)
	for i := 0; i < 200; i++ {
		must(t, dbm.PushLast(ToString(i), 0), StatusSuccess)
	}
	var mu sync.Mutex
	got := map[string]int{}
	var wg sync.WaitGroup
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				_, v, st := dbm.PopFirstStr()
				if !st.IsOK() {
					return
				}
				mu.Lock()
				got[v]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(got) != 200 {
		t.Fatalf("%d distinct records popped", len(got))
	}
	for v, n := range got {
		if n != 1 {
			t.Fatalf("%s popped %d times", v, n)
		}
	}
}

func TestAppendMulti(t *testing.T) {
	dbm := open(t, "*", nil)
	must(t, dbm.Set("a", "1", true), StatusSuccess)
	must(t, dbm.AppendMulti(map[string][]byte{"a": []byte("2"), "b": []byte("3")}, ":"), StatusSuccess)
	must(t, dbm.AppendMultiStr(map[string]string{"b": "4"}, []byte(",")), StatusSuccess)
	if !bytes.Equal(dbm.GetSimple("a", ""), []byte("1:2")) || dbm.GetStrSimple("b", "") != "3,4" {
		t.Fatal("AppendMulti")
	}
	if !NewDBM().AppendMultiStr(map[string]string{"a": "b"}, "").Equals(StatusPreconditionError) {
		t.Fatal("not open")
	}
}

// A processor's panic comes out of the call that ran it, after the library
// has let go of the record: the database is usable afterwards.
func TestProcessorPanicIsRaisedAfterTheCall(t *testing.T) {
	dbm := open(t, "casket.tkh", "truncate=true")
	must(t, dbm.Set("k", "v", true), StatusSuccess)
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Fatalf("recovered %v", p)
			}
		}()
		dbm.Process("k", func(k, v []byte) interface{} { panic("boom") }, true)
		t.Fatal("no panic")
	}()
	must(t, dbm.Set("k", "w", true), StatusSuccess)
	calls := 0
	must(t, dbm.Process("k", func(k, v []byte) interface{} { calls++; return "" }, true), StatusSuccess)
	if v, st := dbm.Get("k"); !st.IsOK() || len(v) != 0 || calls != 1 {
		t.Fatalf("an empty answer stores an empty value: %q %v, %d calls", v, st, calls)
	}
}
