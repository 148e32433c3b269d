package memstored

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestFilePathSizeTimestampHealth(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "casket.tkh")
	dbm := open(t, "casket.tkh", "truncate=true")
	if _, st := NewDBM().GetFileSize(); !st.Equals(StatusPreconditionError) || NewDBM().IsHealthy() {
		t.Fatal("not open")
	}
	dbm.Close()
	must(t, dbm.Open(path, true, "truncate=true"), StatusSuccess)
	defer dbm.Destruct()
	must(t, dbm.Set("k", "v", true), StatusSuccess)
	must(t, dbm.Synchronize(false, nil), StatusSuccess)
	if p, st := dbm.GetFilePath(); !st.IsOK() || p != path || dbm.GetFilePathSimple() != path {
		t.Fatalf("path %q %v", p, st)
	}
	if n, st := dbm.GetFileSize(); !st.IsOK() || n <= 0 || dbm.GetFileSizeSimple() != n {
		t.Fatalf("size %d %v", n, st)
	}
	before := float64(time.Now().UnixNano()) / 1e9
	must(t, dbm.Synchronize(false, nil), StatusSuccess)
	after := float64(time.Now().UnixNano()) / 1e9
	if ts, st := dbm.GetTimestamp(); !st.IsOK() || ts < before-0.001 || ts > after+0.001 || dbm.GetTimestampSimple() != ts {
		t.Fatalf("timestamp %f %v, synchronized between %f and %f", ts, st, before, after)
	}
	if !dbm.IsHealthy() {
		t.Fatal("healthy")
	}
	mem := open(t, "*", nil)
	if p, st := mem.GetFilePath(); !st.IsOK() || p != "" || mem.GetTimestampSimple() <= 0 {
		t.Fatalf("in memory: %q %v", p, st)
	}
	must(t, mem.CopyFileData(filepath.Join(dir, "x"), false), StatusPreconditionError)
}

func TestCopyFileDataExportAndRestore(t *testing.T) {
	for _, params := range []string{"truncate=true", "truncate=true,num_shards=3"} {
		dir := t.TempDir()
		src := NewDBM()
		must(t, src.Open(filepath.Join(dir, "src.tkh"), true, params), StatusSuccess)
		for i := 0; i < 20; i++ {
			must(t, src.Set(ToString(i), i*i, true), StatusSuccess)
		}
		copyPath := filepath.Join(dir, "copy.tkh")
		must(t, src.CopyFileData(copyPath, true), StatusSuccess)
		must(t, src.Close(), StatusSuccess)
		cp := NewDBM()
		must(t, cp.Open(copyPath, false, "num_shards=0"), StatusSuccess)
		if cp.CountSimple() != 20 || cp.GetStrSimple("7", "") != "49" {
			t.Fatalf("%s: the copy has %d records", params, cp.CountSimple())
		}
		mem := open(t, "+", nil)
		must(t, cp.Export(mem), StatusSuccess)
		must(t, cp.Close(), StatusSuccess)
		if mem.CountSimple() != 20 {
			t.Fatalf("%s: exported %d", params, mem.CountSimple())
		}
		if params != "truncate=true" {
			continue // the engine's restore reads unsharded files only
		}
		restored := filepath.Join(dir, "restored.tkh")
		must(t, RestoreDatabase(filepath.Join(dir, "src.tkh"), restored, "", -1, ""), StatusSuccess)
		r := NewDBM()
		must(t, r.Open(restored, false, nil), StatusSuccess)
		if r.CountSimple() != 20 || r.GetStrSimple("7", "") != "49" {
			t.Fatalf("%s: restored %d", params, r.CountSimple())
		}
		r.Close()
	}
	dir := t.TempDir()
	if RestoreDatabase(filepath.Join(dir, "none.tkh"), filepath.Join(dir, "r.tkh"), "", -1, "").IsOK() {
		t.Fatal("restored a database that does not exist")
	}
	must(t, RestoreDatabase(filepath.Join(dir, "none.tkh"), filepath.Join(dir, "r.tkh"), "", 10, ""),
		StatusNotImplementedError)
}

func TestFlatRecordsAndKeyLines(t *testing.T) {
	dbm := open(t, "casket.tkt", "truncate=true")
	must(t, dbm.Set("a", "", true), StatusSuccess)
	must(t, dbm.Set("b", make([]byte, 200), true), StatusSuccess)
	f := NewFile()
	path := filepath.Join(t.TempDir(), "flat")
	must(t, f.Open(path, true, nil), StatusSuccess)
	defer f.Destruct()
	f.Append("stale bytes, replaced by the export")
	must(t, dbm.ExportToFlatRecords(f), StatusSuccess)
	data, _ := os.ReadFile(path)
	// Tkrzw's layout: 0xFF, the size as a big-endian varint, the bytes.
	want := append([]byte{0xFF, 1, 'a', 0xFF, 0, 0xFF, 1, 'b', 0xFF, 0x81, 0x48}, make([]byte, 200)...)
	if !reflect.DeepEqual(data, want) {
		t.Fatalf("flat records %x", data)
	}
	must(t, dbm.Clear(), StatusSuccess)
	must(t, dbm.ImportFromFlatRecords(f), StatusSuccess)
	if v, st := dbm.Get("a"); !st.IsOK() || len(v) != 0 || len(dbm.GetSimple("b", "")) != 200 {
		t.Fatal("imported")
	}
	// Metadata before a key is skipped; a lone key is broken data.
	must(t, f.Truncate(0), StatusSuccess)
	f.Append([]byte{0xFE, 1, 'm', 0xFF, 1, 'k', 0xFF, 1, 'v', 0xFF, 1, 'x'})
	must(t, dbm.ImportFromFlatRecords(f), StatusBrokenDataError)
	if dbm.GetStrSimple("k", "") != "v" {
		t.Fatal("the records before the fault are stored")
	}
	must(t, f.Truncate(0), StatusSuccess)
	f.Append([]byte{0x12, 0})
	must(t, dbm.ImportFromFlatRecords(f), StatusBrokenDataError)
	must(t, dbm.ExportKeysAsLines(f), StatusSuccess)
	if lines := f.Search("begin", "", 0); !reflect.DeepEqual(lines, []string{"a", "b", "k"}) {
		t.Fatalf("key lines %q", lines)
	}
}

func TestDBMStringNamesPathAndCount(t *testing.T) {
	dbm := open(t, "casket.tkh", nil)
	must(t, dbm.Set("k", "v", true), StatusSuccess)
	want := "#<memstored.DBM:\"" + dbm.GetFilePathSimple() + "\":1>"
	if got := dbm.String(); got != want {
		t.Fatalf("String %q, want %q", got, want)
	}
	if got := NewDBM().String(); got != "#<memstored.DBM:unopened>" {
		t.Fatalf("unopened: %q", got)
	}
}
