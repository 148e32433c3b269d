package memstored

import (
	"path/filepath"
	"testing"
)

// Close invalidates live iterators (they answer StatusPreconditionError,
// also after the handle is opened again) and releases the file: the same
// process reopens it at once.
func TestIteratorOfClosedDBM(t *testing.T) {
	path := filepath.Join(t.TempDir(), "casket.tkt")
	dbm := NewDBM()
	must(t, dbm.Open(path, true, "truncate=true"), StatusSuccess)
	must(t, dbm.Set("k", "v", true), StatusSuccess)
	it := dbm.MakeIterator()
	defer it.Destruct()
	must(t, it.First(), StatusSuccess)
	must(t, dbm.Close(), StatusSuccess)
	must(t, it.Next(), StatusPreconditionError)
	if _, _, st := it.Get(); !st.Equals(StatusPreconditionError) {
		t.Fatalf("Get after Close: %v", st)
	}
	must(t, dbm.Open(path, true, nil), StatusSuccess)
	defer dbm.Close()
	must(t, it.First(), StatusPreconditionError)
	if dbm.GetStrSimple("k", "") != "v" {
		t.Fatal("reopened without its record")
	}
	fresh := dbm.MakeIterator()
	defer fresh.Destruct()
	must(t, fresh.First(), StatusSuccess)
}
