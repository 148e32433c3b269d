package memstored

import (
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
)

func TestFileReadWriteAppendTruncate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "casket.txt")
	f := NewFile()
	if _, st := f.GetSize(); !st.Equals(StatusPreconditionError) {
		t.Fatal("not open")
	}
	must(t, f.Open(path, true, "truncate=true"), StatusSuccess)
	must(t, f.Open(path, true, nil), StatusPreconditionError)
	must(t, f.Write(3, "defg"), StatusSuccess)
	must(t, f.Write(0, []byte("abc")), StatusSuccess)
	off, st := f.Append("hij")
	must(t, st, StatusSuccess)
	if off != 7 {
		t.Fatalf("appended at %d", off)
	}
	if s, st := f.ReadStr(2, 5); !st.IsOK() || s != "cdefg" {
		t.Fatalf("ReadStr %q %v", s, st)
	}
	if _, st := f.Read(8, 4); !st.Equals(StatusInfeasibleError) {
		t.Fatalf("a read past the end: %v", st)
	}
	must(t, f.Truncate(4), StatusSuccess)
	must(t, f.Synchronize(true, 0, 0), StatusSuccess)
	if p, _ := f.GetPath(); p != path {
		t.Fatalf("GetPath %q", p)
	}
	must(t, f.Close(), StatusSuccess)
	if data, _ := os.ReadFile(path); string(data) != "abcd" {
		t.Fatalf("on disk: %q", data)
	}
	must(t, f.Open(path, false, nil), StatusSuccess)
	if n, _ := f.GetSize(); n != 4 {
		t.Fatalf("reopened size %d", n)
	}
	// As Tkrzw's files answer ("not writable file").
	if !f.Write(0, "x").Equals(StatusPreconditionError) {
		t.Fatal("a read-only file refuses writes")
	}
	f.Destruct()
	must(t, NewFile().Open(filepath.Join(t.TempDir(), "none"), true, "no_create=true"), StatusNotFoundError)
}

// Appends from several goroutines never overlap: each gets its own offset.
func TestFileConcurrentAppends(t *testing.T) {
	f := NewFile()
	must(t, f.Open(filepath.Join(t.TempDir(), "log"), true, nil), StatusSuccess)
	defer f.Destruct()
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				f.Append("0123456789")
			}
		}()
	}
	wg.Wait()
	if n, _ := f.GetSize(); n != 2000 {
		t.Fatalf("size %d", n)
	}
	if lines := f.Search("contain", "9", 0); len(lines) != 1 {
		t.Fatalf("one line expected, %d", len(lines))
	}
}

func TestFileSearchModes(t *testing.T) {
	f := NewFile()
	must(t, f.Open(filepath.Join(t.TempDir(), "lines"), true, nil), StatusSuccess)
	defer f.Destruct()
	f.Append("apple pie\nApple\nbanana split\ncherry\npineapple\n")
	cases := []struct {
		mode, pattern string
		capacity      int
		want          []string
	}{
		{"contain", "apple", 0, []string{"apple pie", "pineapple"}},
		{"containcase", "apple", 2, []string{"apple pie", "Apple"}},
		{"containword", "apple", 0, []string{"apple pie"}},
		{"containcaseword", "apple", 0, []string{"apple pie", "Apple"}},
		{"contain*", "split\ncherry", 0, []string{"banana split", "cherry"}},
		{"begin", "b", 0, []string{"banana split"}},
		{"end", "e", 0, []string{"apple pie", "Apple", "pineapple"}},
		{"regex", "^[a-c].*[ty]$", 0, []string{"banana split", "cherry"}},
		{"edit", "aple", 1, []string{"Apple"}},
		{"editbin", "cheri", 1, []string{"cherry"}},
		{"nosuchmode", "a", 0, []string{}},
		{"regex", "(", 0, []string{}},
	}
	for _, c := range cases {
		if got := f.Search(c.mode, c.pattern, c.capacity); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Search(%q, %q, %d) = %q, want %q", c.mode, c.pattern, c.capacity, got, c.want)
		}
	}
	if _, st := f.search("nosuchmode", "a", 0); !st.Equals(StatusInvalidArgumentError) {
		t.Errorf("unknown mode: %v", st)
	}
}
