package fs

import (
	"bytes"
	"encoding/binary"
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
// and go on only if it fails with ENOENT, and read with their own message
// size (64 KiB), so that a tensor's data takes many reads.
func TestDiodClients(t *testing.T) {
	cat, ls := lookDiod(t, "diodcat"), lookDiod(t, "diodls")
	needParser(t)
	ts := startServer(t, Config{})
	diod := func(tool string, args ...string) string {
		t.Helper()
		out, err := osexec.Command(tool, append([]string{"-s", ts.tcp, "-a", "/"}, args...)...).Output()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	fields := func(s string) string { return strings.Join(strings.Fields(s), " ") }

	if out := diod(cat, "README"); !strings.Contains(out, "/sessions/clone") {
		t.Errorf("diodcat README:\n%s", out)
	}
	if out := diod(cat, "sessions/clone"); out != "1\n" {
		t.Errorf("diodcat sessions/clone: %q", out)
	}
	if out := fields(diod(ls, "sessions")); out != "clone 1" {
		t.Errorf("diodls sessions: %q", out)
	}
	if out := fields(diod(ls, "sessions/1")); out != "ctl submit error graphs history tensors" {
		t.Errorf("diodls sessions/1: %q", out)
	}

	// The session belongs to this host's user over TCP, as does this
	// client's connection.
	c := dial(t, ts.tcp)
	const n = 100000
	submit(t, c, "/sessions/1", "x = arange(100000, chunks=30000) * 3\n")
	if st := diod(cat, "sessions/1/graphs/last/wait"); state(st) != "SUCCEEDED" {
		t.Fatalf("diodcat wait:\n%s", st)
	}
	if st := diod(cat, "sessions/1/graphs/1/status"); state(st) != "SUCCEEDED" || !strings.Contains(st, "\noperands ") {
		t.Errorf("diodcat status:\n%s", st)
	}
	if out := fields(diod(ls, "sessions/1/graphs")); out != "1 last" {
		t.Errorf("diodls graphs: %q", out)
	}
	if out := fields(diod(ls, "sessions/1/tensors")); out != "x" {
		t.Errorf("diodls tensors: %q", out)
	}
	// -l shows the sizes of data and npy from stat.
	if out := diod(ls, "-l", "sessions/1/tensors/x"); !strings.Contains(out, " 800000 ") {
		t.Errorf("diodls -l tensors/x shows no 800000-byte data:\n%s", out)
	}
	want := make([]byte, 0, 8*n)
	for i := range n {
		want = binary.LittleEndian.AppendUint64(want, uint64(3*i))
	}
	if got := diod(cat, "sessions/1/tensors/x/data"); !bytes.Equal([]byte(got), want) {
		t.Errorf("diodcat tensors/x/data: %d bytes, not the %d of 3*arange(%d)", len(got), len(want), n)
	}
	if got := diod(cat, "sessions/1/tensors/x/meta"); !strings.Contains(got, "shape (100000,)\n") {
		t.Errorf("diodcat tensors/x/meta:\n%s", got)
	}
	if got := diod(cat, "sessions/1/tensors/x/chunks/3/data"); !bytes.Equal([]byte(got), want[8*90000:]) {
		t.Errorf("diodcat tensors/x/chunks/3/data: %d bytes", len(got))
	}
}
