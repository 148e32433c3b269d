package memstored

import (
	"bytes"
	"os"
	"regexp"
	"runtime"
	"testing"
)

func TestSpecialValuesAreKnownByIdentity(t *testing.T) {
	anyCopy, nilCopy := string([]byte(AnyString)), string([]byte(NilString))
	cases := []struct {
		name string
		got  bool
		want bool
	}{
		{"IsAnyData(AnyBytes)", IsAnyData(AnyBytes), true},
		{"IsAnyData(AnyString)", IsAnyData(AnyString), true},
		{"IsAnyData(copy of AnyString)", IsAnyData(anyCopy), false},
		{"IsAnyBytes(copy)", IsAnyBytes(append([]byte{}, AnyBytes...)), false},
		{"IsAnyData(\"\")", IsAnyData(""), false},
		{"IsNilData(nil)", IsNilData(nil), true},
		{"IsNilData([]byte(nil))", IsNilData([]byte(nil)), true},
		{"IsNilData(NilString)", IsNilData(NilString), true},
		{"IsNilData(copy of NilString)", IsNilData(nilCopy), false},
		{"IsNilData(\"\")", IsNilData(""), false},
		{"IsNilData([]byte{})", IsNilData([]byte{}), false},
		{"IsNilData(0)", IsNilData(0), false},
		{"IsRemoveData(RemoveBytes)", IsRemoveData(RemoveBytes), true},
		{"IsRemoveData(RemoveString)", IsRemoveData(RemoveString), true},
		{"IsRemoveString(copy)", IsRemoveString(string([]byte(RemoveString))), false},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s = %t, want %t", c.name, c.got, c.want)
		}
	}
}

func TestUtilityConstantsAndFunctions(t *testing.T) {
	cargo, err := os.ReadFile("../../Cargo.toml")
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`(?m)^version = "([^"]+)"`).FindSubmatch(cargo); m == nil || string(m[1]) != Version {
		t.Errorf("Version %q is not Cargo.toml's %q", Version, m)
	}
	if PageSize <= 0 || Int64Min != -1<<63 || Int64Max != 1<<63-1 {
		t.Errorf("PageSize %d Int64Min %d Int64Max %d", PageSize, Int64Min, Int64Max)
	}
	if runtime.GOOS == "linux" && (OSName != "Linux" || GetMemoryCapacity() <= 0 || GetMemoryUsage() <= 0 ||
		GetMemoryUsage() > GetMemoryCapacity()) {
		t.Errorf("OSName %q capacity %d usage %d", OSName, GetMemoryCapacity(), GetMemoryUsage())
	}
	// Tkrzw's own values for these (tkrzw-go's unit test).
	hashes := []struct{ got, want uint64 }{
		{PrimaryHash([]byte("abc"), 1<<32-1), 3042090208},
		{PrimaryHash([]byte("abc"), ^uint64(0)), 16973900370012003622},
		{SecondaryHash([]byte("abc"), 1<<32-1), 702176507},
		{SecondaryHash([]byte("abc"), ^uint64(0)), 1765794342254572867},
	}
	for i, h := range hashes {
		if h.got != h.want {
			t.Errorf("hash %d: %d, want %d", i, h.got, h.want)
		}
	}
	// Longer than one 8-byte block, with a tail: the same bucket always.
	long := []byte("a longer key than eight bytes")
	if PrimaryHash(long, 1000) != PrimaryHash(append([]byte{}, long...), 1000) || PrimaryHash(long, 1000) >= 1000 {
		t.Error("PrimaryHash is not a stable bucket")
	}
	dists := []struct {
		a, b string
		utf  bool
		want int
	}{{"", "", true, 0}, {"ac", "abc", true, 1}, {"あいう", "あう", true, 1}, {"あいう", "あう", false, 3}, {"kitten", "sitting", false, 3}}
	for _, d := range dists {
		if got := EditDistanceLev(d.a, d.b, d.utf); got != d.want {
			t.Errorf("EditDistanceLev(%q, %q, %t) = %d, want %d", d.a, d.b, d.utf, got, d.want)
		}
	}
	for _, n := range []int64{-123, 0, 123, 19780211, Int64Min, Int64Max} {
		if b := SerializeInt(n); len(b) != 8 || DeserializeInt(b) != n {
			t.Errorf("SerializeInt(%d) = %x", n, b)
		}
		if f := float64(n); DeserializeFloat(SerializeFloat(f)) != f {
			t.Errorf("SerializeFloat(%v)", f)
		}
	}
	if !bytes.Equal(SerializeInt(1), []byte{0, 0, 0, 0, 0, 0, 0, 1}) || DeserializeFloat([]byte{1}) != 0 {
		t.Error("big-endian layout")
	}
}
