package main

import (
	"os"
	osexec "os/exec"
	"strings"
	"testing"
)

// TestPythonModule runs the Python module's tests (python/tests) against a
// real `marsfs up` with two workers: over the unix socket, over loopback
// TCP, and through a FUSE mount where one can be made. Each run is a
// session, a run, an upload, a refused spec, a failed graph, a drop and a
// progress bar, checked against NumPy.
func TestPythonModule(t *testing.T) {
	if err := osexec.Command("/usr/bin/python3", "-c", "import numpy").Run(); err != nil {
		t.Skip("no /usr/bin/python3 with NumPy")
	}
	bin := build(t)
	var p *upProcess
	addrs := map[string]string{}
	if _, err := os.Stat("/dev/fuse"); err == nil {
		var dir string
		p, dir = startMounted(t, bin, "--workers", "2")
		addrs["mount"] = dir
	} else {
		p = startUp(t, bin, "--workers", "2")
	}
	addrs["unix socket"], addrs["loopback TCP"] = p.unx, p.tcp
	for kind, addr := range addrs {
		cmd := osexec.Command("/usr/bin/python3", "-W", "error::ResourceWarning", "-m", "unittest", "-v", "tests/test_marsfs.py")
		cmd.Dir = "../../python"
		cmd.Env = append(os.Environ(), "MARSFS_ADDR="+addr)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "\nOK") {
			t.Errorf("python tests over the %s (%s): %v\n%s", kind, addr, err, out)
			continue
		}
		t.Logf("python tests over the %s: %s", kind, strings.TrimSpace(string(out[strings.LastIndex(string(out), "Ran "):])))
	}
	// The README's example, verbatim: its last line raises SpecError.
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, example, _ := strings.Cut(string(readme), "## From Python")
	_, example, _ = strings.Cut(example, "```python\n")
	example, _, _ = strings.Cut(example, "```")
	cmd := osexec.Command("/usr/bin/python3", "-c", example)
	cmd.Env = append(os.Environ(), "MARSFS_ADDR="+p.unx, "PYTHONPATH=../../python")
	out, _ := cmd.CombinedOutput()
	for _, want := range []string{"499999.5 288675.13", "['m', 's', 'x']", "marsfs.SpecError: 1:5: unknown function frobnicate"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("README's Python example: no %q in\n%s", want, out)
		}
	}
	p.stop(t)
}
