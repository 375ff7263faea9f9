package fs

import (
	osexec "os/exec"
	"strings"
	"testing"
)

// lookDiod finds one of diod's client tools, which speak 9P2000.L as
// another implementation than the p9 package's client.
func lookDiod(t *testing.T, name string) string {
	for _, p := range []string{name, "/usr/sbin/" + name, "/usr/bin/" + name} {
		if path, err := osexec.LookPath(p); err == nil {
			return path
		}
	}
	t.Skipf("%s not installed (Debian package diod)", name)
	return ""
}

// TestDiodClients reads the tree with diod's tools: they send Tauth first
// and go on only if it fails with ENOENT.
func TestDiodClients(t *testing.T) {
	cat, ls := lookDiod(t, "diodcat"), lookDiod(t, "diodls")
	ts := startServer(t, Config{})
	out, err := osexec.Command(cat, "-s", ts.tcp, "-a", "/", "README").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "/sessions/clone") {
		t.Errorf("diodcat README: %v\n%s", err, out)
	}
	out, err = osexec.Command(cat, "-s", ts.tcp, "-a", "/", "sessions/clone").CombinedOutput()
	if err != nil || string(out) != "1\n" {
		t.Errorf("diodcat sessions/clone: %v %q", err, out)
	}
	out, err = osexec.Command(ls, "-s", ts.tcp, "-a", "/", "sessions").CombinedOutput()
	if err != nil || strings.Join(strings.Fields(string(out)), " ") != "clone 1" {
		t.Errorf("diodls sessions: %v\n%s", err, out)
	}
}
