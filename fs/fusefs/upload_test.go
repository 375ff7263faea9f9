package fusefs

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/codec"
)

// TestUploadCommands uploads through the mount as users do: cp, cp -p and
// Python's shutil.copy2 (which set the file's times and mode after writing
// it), cp over a tensor already there, and rm -r to drop one.
func TestUploadCommands(t *testing.T) {
	dir := mountTree(t)
	s := filepath.Join(dir, "sessions", strings.TrimSpace(readFile(t, filepath.Join(dir, "sessions/clone"))))
	a := tensor.NewArray(tensor.Float64, []int{4})
	copy(a.Float64s(), []float64{1, 2, 3, 4})
	var buf bytes.Buffer
	if err := codec.WriteNPY(&buf, a); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "a.npy")
	if err := os.WriteFile(src, buf.Bytes(), 0644); err != nil {
		t.Fatal(err)
	}
	run := func(name string, args ...string) {
		t.Helper()
		if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			t.Errorf("%s %v: %v: %s (error file %q)", name, args, err, out, readFile(t, filepath.Join(s, "error")))
		}
	}
	tensors := filepath.Join(s, "tensors")
	run("cp", src, tensors+"/plain.npy")
	run("cp", "-p", src, tensors+"/kept.npy")
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		run("/usr/bin/python3", "-c", "import shutil, sys; shutil.copy2(sys.argv[1], sys.argv[2])", src, tensors+"/py.npy")
	}
	run("cp", src, tensors+"/plain.npy") // over the tensor made before
	for _, name := range []string{"plain", "kept"} {
		if got := readFile(t, filepath.Join(tensors, name, "text")); got != "[1. 2. 3. 4.]\n" {
			t.Errorf("%s/text = %q", name, got)
		}
	}
	run("rm", "-r", tensors+"/plain")
	ents, _ := os.ReadDir(tensors)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, " "); got != "kept py" && got != "kept" {
		t.Errorf("tensors after rm -r plain: %q", got)
	}
}
