package memstored

import (
	"sync"
	"testing"
)

func TestCompareExchangeWithAnyAndNil(t *testing.T) {
	dbm := open(t, "casket.tkh", "truncate=true")
	must(t, dbm.CompareExchange("k", AnyString, AnyString), StatusInfeasibleError)
	must(t, dbm.CompareExchange("k", NilString, ""), StatusSuccess)
	if v, st := dbm.Get("k"); !st.IsOK() || v == nil || len(v) != 0 {
		t.Fatalf("an empty desired value is a value: %q %v", v, st)
	}
	must(t, dbm.CompareExchange("k", nil, "x"), StatusInfeasibleError)
	must(t, dbm.CompareExchange("k", "", "abc"), StatusSuccess)
	must(t, dbm.CompareExchange("k", AnyBytes, AnyBytes), StatusSuccess)
	must(t, dbm.CompareExchange("k", AnyString, "def"), StatusSuccess)
	if dbm.GetStrSimple("k", "*") != "def" {
		t.Fatal("Any expected, value desired")
	}
	must(t, dbm.CompareExchange("k", AnyString, NilString), StatusSuccess)
	if dbm.Check("k") {
		t.Fatal("NilString desired removes")
	}
	old, st := dbm.CompareExchangeAndGetStr("k", nil, "123")
	must(t, st, StatusSuccess)
	if !IsNilString(old) {
		t.Fatalf("old of an absent record: %q", old)
	}
	old, st = dbm.CompareExchangeAndGetStr("k", "999", "x")
	must(t, st, StatusInfeasibleError)
	if old != "123" {
		t.Fatalf("a refused exchange still returns the value: %q", old)
	}
	raw, st := dbm.CompareExchangeAndGet("k", AnyString, nil)
	must(t, st, StatusSuccess)
	if string(raw) != "123" || dbm.Check("k") {
		t.Fatalf("CompareExchangeAndGet any->nil: %q", raw)
	}
	if raw, st := NewDBM().CompareExchangeAndGet("k", nil, "v"); raw != nil || !st.Equals(StatusPreconditionError) {
		t.Fatal("not open")
	}
}

func TestCompareExchangeMultiWithAnyNilAndEmpty(t *testing.T) {
	dbm := open(t, "casket.tkt", "truncate=true")
	set := func(a, b string) []KeyValueStrPair { return []KeyValueStrPair{{"a", a}, {"b", b}} }
	must(t, dbm.CompareExchangeMultiStr(set(NilString, NilString), set("", "two")), StatusSuccess)
	if v, st := dbm.GetStr("a"); !st.IsOK() || v != "" {
		t.Fatalf("the empty string is stored, not taken for 'no record': %q %v", v, st)
	}
	must(t, dbm.CompareExchangeMultiStr(set(NilString, AnyString), set("x", "y")), StatusInfeasibleError)
	must(t, dbm.CompareExchangeMultiStr(set("", AnyString), set("one", AnyString)), StatusSuccess)
	if dbm.GetStrSimple("a", "*") != "one" || dbm.GetStrSimple("b", "*") != "two" {
		t.Fatal("AnyString desired leaves the record")
	}
	must(t, dbm.CompareExchangeMulti(
		[]KeyValuePair{{[]byte("a"), AnyBytes}, {[]byte("c"), AnyBytes}},
		[]KeyValuePair{{[]byte("a"), nil}}), StatusInfeasibleError)
	must(t, dbm.CompareExchangeMultiStr(set(AnyString, "two"), set(NilString, NilString)), StatusSuccess)
	if n := dbm.CountSimple(); n != 0 {
		t.Fatalf("%d records left", n)
	}
}

// Many goroutines add one to a counter through AnyString expectations: a
// compare-exchange that lost a race is retried, never lost.
func TestCompareExchangeAnyUnderContention(t *testing.T) {
	dbm := open(t, "*", nil)
	must(t, dbm.Set("n", "0", true), StatusSuccess)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				for {
					cur, st := dbm.CompareExchangeAndGetStr("n", AnyString, AnyString)
					if !st.IsOK() {
						t.Error(st)
						return
					}
					if dbm.CompareExchange("n", cur, ToString(ToInt(cur)+1)).IsOK() {
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	if got := dbm.GetStrSimple("n", ""); got != "400" {
		t.Fatalf("counter %s, want 400", got)
	}
}
