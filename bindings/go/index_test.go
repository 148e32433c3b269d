package memstored

import (
	"path/filepath"
	"reflect"
	"testing"
)

func TestIndexPairsInOrder(t *testing.T) {
	for _, name := range []string{"index.tkt", ""} {
		path := name
		if name != "" {
			path = filepath.Join(t.TempDir(), name)
		}
		idx := NewIndex()
		must(t, idx.Open(path, true, "truncate=true"), StatusSuccess)
		// Keys with NUL bytes and keys that prefix others stay apart.
		pairs := [][2]string{{"b", "2"}, {"b", "1"}, {"a\x00", "x"}, {"a", "z"}, {"ab", "y"}, {"a", "\x00"}}
		for _, p := range pairs {
			must(t, idx.Add(p[0], p[1]), StatusSuccess)
		}
		must(t, idx.Add("b", "1"), StatusSuccess)
		if n := idx.Count(); n != 6 {
			t.Fatalf("%q: count %d", name, n)
		}
		if got := idx.GetValuesStr("a", 0); !reflect.DeepEqual(got, []string{"\x00", "z"}) {
			t.Fatalf("%q: values of a: %q", name, got)
		}
		if got := idx.GetValuesStr("b", 1); !reflect.DeepEqual(got, []string{"1"}) {
			t.Fatalf("%q: first value of b: %q", name, got)
		}
		if !idx.Check("a\x00", "x") || idx.Check("a", "x") {
			t.Fatalf("%q: Check", name)
		}
		must(t, idx.Remove("a", "nope"), StatusNotFoundError)
		it := idx.MakeIterator()
		it.First()
		var got [][2]string
		for k, v, ok := it.GetStr(); ok; k, v, ok = it.GetStr() {
			got = append(got, [2]string{k, v})
			it.Next()
		}
		want := [][2]string{{"a", "\x00"}, {"a", "z"}, {"a\x00", "x"}, {"ab", "y"}, {"b", "1"}, {"b", "2"}}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: order %q", name, got)
		}
		it.Jump("ab", "")
		if k, v, ok := it.GetStr(); !ok || k != "ab" || v != "y" {
			t.Fatalf("%q: Jump: %q %q", name, k, v)
		}
		it.Last()
		it.Previous()
		if k, v, _ := it.GetStr(); k != "b" || v != "1" {
			t.Fatalf("%q: Last, Previous: %q %q", name, k, v)
		}
		it.Destruct()
		if idx.GetFilePath() != path || !idx.IsWritable() {
			t.Fatalf("%q: path %q", name, idx.GetFilePath())
		}
		must(t, idx.Clear(), StatusSuccess)
		must(t, idx.Close(), StatusSuccess)
		if idx.IsOpen() || idx.Add("a", "b").IsOK() || len(idx.GetValues("a", 0)) != 0 {
			t.Fatalf("%q: closed", name)
		}
	}
}

func TestIndexSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.tkt")
	idx := NewIndex()
	must(t, idx.Open(path, true, map[string]string{"truncate": "true", "key_comparator": "LexicalKeyComparator"}), StatusSuccess)
	must(t, idx.Add("k", "v"), StatusSuccess)
	must(t, idx.Close(), StatusSuccess)
	must(t, idx.Open(path, false, nil), StatusSuccess)
	defer idx.Destruct()
	if !idx.Check("k", "v") || idx.IsWritable() {
		t.Fatal("reopened read-only with its pair")
	}
}
