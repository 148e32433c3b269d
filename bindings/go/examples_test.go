package memstored

import (
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// runTwice builds an example and runs it twice in one fresh directory:
// the seed's programs open their files with truncate=true, so the second
// run must print what the first did.
func runTwice(t *testing.T, example string) []string {
	t.Helper()
	dir := t.TempDir()
	exe := filepath.Join(dir, example)
	build := exec.Command("go", "build", "-o", exe, "./examples/"+example)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", example, err, out)
	}
	var outs []string
	for run := 0; run < 2; run++ {
		cmd := exec.Command(exe)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s run %d: %v", example, run+1, err)
		}
		outs = append(outs, string(out))
	}
	if outs[0] != outs[1] {
		t.Fatalf("%s printed differently the second time:\n%s---\n%s", example, outs[0], outs[1])
	}
	return strings.Split(strings.TrimSuffix(outs[0], "\n"), "\n")
}

// Seed 004's first program: the three values, then the records (a hash
// file lists them in its own order).
func TestExampleHopStepJump(t *testing.T) {
	lines := runTwice(t, "hopstepjump")
	if len(lines) != 6 || !reflect.DeepEqual(lines[:3], []string{"hop", "step", "jump"}) {
		t.Fatalf("output %q", lines)
	}
	records := append([]string(nil), lines[3:]...)
	sort.Strings(records)
	if !reflect.DeepEqual(records, []string{"first hop", "second step", "third jump"}) {
		t.Fatalf("records %q", lines[3:])
	}
}

// Seed 004's second program: after the transfer, Alice 2500 and Bob 1500.
func TestExampleTransfer(t *testing.T) {
	lines := runTwice(t, "transfer")
	if !reflect.DeepEqual(lines, []string{"Alice 2500", "Bob 1500"}) {
		t.Fatalf("output %q", lines)
	}
}
