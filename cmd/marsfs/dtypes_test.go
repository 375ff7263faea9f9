package main

import (
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNarrowDTypesThroughMount does what a user with images and half
// precision data does: NumPy writes a uint8 image stack and a float16
// matrix, `cp` puts them into a session on a mount of `marsfs up` (worker
// processes, chunks in shared memory), a spec computes on them in their own
// dtypes, and NumPy reads the results back from the mount and compares
// them with its own, dtype for dtype.
func TestNarrowDTypesThroughMount(t *testing.T) {
	needFUSE(t)
	py := "/usr/bin/python3"
	if err := osexec.Command(py, "-c", "import numpy").Run(); err != nil {
		t.Skip("no numpy")
	}
	bin := build(t)
	_, mnt := startMounted(t, bin, "--workers", "2")
	dir := t.TempDir()
	gen := `
import sys, numpy as np
rng = np.random.default_rng(1)
np.save(sys.argv[1] + "/img.npy", rng.integers(0, 256, (6, 200, 300), dtype=np.uint8))
np.save(sys.argv[1] + "/h.npy", (rng.standard_normal((400, 250)) * 10).astype(np.float16))
`
	if out, err := osexec.Command(py, "-c", gen, dir).CombinedOutput(); err != nil {
		t.Fatalf("numpy: %v: %s", err, out)
	}
	sess := filepath.Join(mnt, "sessions", strings.TrimSpace(readMounted(t, filepath.Join(mnt, "sessions/clone"))))
	for _, f := range []string{"img.npy", "h.npy"} {
		if out, err := osexec.Command("cp", filepath.Join(dir, f), sess+"/tensors/").CombinedOutput(); err != nil {
			t.Fatalf("cp %s: %v: %s", f, err, out)
		}
	}
	if meta := readMounted(t, sess+"/tensors/img/meta"); !strings.Contains(meta, "dtype uint8\n") {
		t.Fatalf("img meta:\n%s", meta)
	}
	spec := `mean = img.mean(axis=0)
total = img.sum()
bright = (img > 200).sum(axis=(1, 2))
inv = 255 - img
scaled = img.astype("float32") / 255
hs = h * 2 + 1
hm = h.max(axis=0)
hsum = h.sum(axis=1)
fetch mean, total, bright, inv, scaled, hs, hm, hsum
`
	if err := os.WriteFile(sess+"/submit", []byte(spec), 0o644); err != nil {
		t.Fatalf("submit: %v (error %q)", err, readMounted(t, sess+"/error"))
	}
	if st := readMounted(t, sess+"/graphs/last/wait"); !strings.HasPrefix(st, "SUCCEEDED") {
		t.Fatalf("graph: %s", st)
	}
	check := `
import sys, numpy as np
d, s = sys.argv[1], sys.argv[2]
img, h = np.load(d + "/img.npy"), np.load(d + "/h.npy")
want = {"mean": img.mean(axis=0), "total": img.sum(), "bright": (img > 200).sum(axis=(1, 2)),
        "inv": 255 - img, "scaled": img.astype("float32") / 255, "hs": h * 2 + 1,
        "hm": h.max(axis=0), "hsum": h.sum(axis=1)}
bad = []
for name, w in want.items():
    g = np.load(s + "/tensors/" + name + "/npy")
    exact = w.dtype.kind in "biu" or name in ("hs", "hm", "inv")
    ok = g.dtype == w.dtype and g.shape == w.shape and (np.array_equal(g, w) if exact else np.allclose(g, w, rtol=2e-3 if w.dtype == np.float16 else 1e-6))
    if not ok:
        bad.append("%s: %s%s vs %s%s" % (name, g.dtype, g.shape, w.dtype, w.shape))
print("; ".join(bad))
`
	out, err := osexec.Command(py, "-c", check, dir, sess).CombinedOutput()
	if err != nil {
		t.Fatalf("numpy check: %v: %s", err, out)
	}
	if s := strings.TrimSpace(string(out)); s != "" {
		t.Errorf("results unlike NumPy's: %s", s)
	}
	if text := readMounted(t, sess+"/tensors/total/text"); strings.TrimSpace(text) == "" {
		t.Error("no text for total")
	}
}
