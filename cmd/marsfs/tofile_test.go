package main

import (
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestToNPYThroughMount has NumPy write a file into the data directory of
// `marsfs up` (two worker processes, mounted); a spec written with echo
// reads it with from_npy and writes a result with to_npy; NumPy loads the
// result equal to its own. No temporary file is left, and writing over it
// without overwrite=True is refused at the write.
func TestToNPYThroughMount(t *testing.T) {
	needFUSE(t)
	py := "/usr/bin/python3"
	if err := osexec.Command(py, "-c", "import numpy").Run(); err != nil {
		t.Skip("no numpy")
	}
	bin := build(t)
	data := t.TempDir()
	if out, err := osexec.Command(py, "-c", "import numpy as np, sys; np.save(sys.argv[1] + '/in.npy', np.random.default_rng(4).standard_normal((3000, 700)).astype(np.float32))", data).CombinedOutput(); err != nil {
		t.Fatalf("numpy: %v: %s", err, out)
	}
	_, mnt := startMounted(t, bin, "--workers", "2", "--data-dir", data)
	sess := filepath.Join(mnt, "sessions", strings.TrimSpace(readMounted(t, filepath.Join(mnt, "sessions/clone"))))
	shell := func(cmd string) error {
		return osexec.Command("bash", "-c", "cd "+sess+" && "+cmd).Run()
	}
	if err := shell(`echo 'x = from_npy("in.npy", chunks=(500, 350))
to_npy((x - x.mean(axis=0)) * 2, "out.npy")' > submit`); err != nil {
		t.Fatalf("submit: %v (error %q)", err, readMounted(t, sess+"/error"))
	}
	if st := readMounted(t, sess+"/graphs/last/wait"); !strings.HasPrefix(st, "SUCCEEDED") {
		t.Fatalf("graph: %s", st)
	}
	check := `import numpy as np, sys
x = np.load(sys.argv[1] + "/in.npy")
y = np.load(sys.argv[1] + "/out.npy")
print(y.dtype == np.float32 and y.shape == x.shape and np.allclose(y, (x - x.mean(axis=0)) * 2, rtol=1e-5, atol=1e-5))`
	if out, err := osexec.Command(py, "-c", check, data).CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "True" {
		t.Errorf("NumPy reads out.npy: %s %v", out, err)
	}
	if left, _ := filepath.Glob(filepath.Join(data, "*.part")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if err := shell(`echo 'to_npy(ones(3), "out.npy")' > submit`); err == nil {
		t.Error("writing over out.npy without overwrite=True was accepted")
	} else if msg := readMounted(t, sess+"/error"); !strings.Contains(msg, "exists") {
		t.Errorf("error file: %q", msg)
	}
	if _, err := os.Stat(filepath.Join(data, "out.npy")); err != nil {
		t.Error(err)
	}
}
