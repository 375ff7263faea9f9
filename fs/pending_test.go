package fs

import (
	"strings"
	"testing"
)

// TestPendingTensor checks that a graph's outputs are in tensors/ from the
// submit: their meta says pending until the graph ends; then the tensor
// is there (SUCCEEDED), or the name is gone (cancelled).
func TestPendingTensor(t *testing.T) {
	ts := startServer(t, Config{})
	c := dial(t, ts.sock)
	s := clone(t, c)
	// A product of a few seconds, cancelled once seen pending.
	submit(t, c, s, "a = rand(4000, 4000, chunks=4000, seed=1)\nslow = (a @ a).sum()\n")
	if got := read(t, c, s+"/tensors/slow/meta"); got != "pending graph 1\n" {
		t.Errorf("meta of a running graph's output: %q", got)
	}
	ents, err := c.ReadDir(s + "/tensors")
	if err != nil || len(ents) != 1 || ents[0].Name != "slow" {
		t.Errorf("tensors/ while graph 1 runs: %v %v", ents, err)
	}
	if err := c.WriteFile(s+"/graphs/1/ctl", []byte("cancel\n")); err != nil {
		t.Fatal(err)
	}
	if st := read(t, c, s+"/graphs/1/wait"); !strings.HasPrefix(st, "CANCELLED") {
		t.Fatalf("graph 1: %s", st)
	}
	if _, err := c.ReadFile(s + "/tensors/slow/meta"); err == nil {
		t.Errorf("a cancelled graph's output is still in tensors/")
	}
	// A fid walked to tensors/z while its graph runs (as a FUSE kernel
	// keeps the directory's inode) finds the tensor's files in it once
	// the graph has ended.
	submit(t, c, s, "a = rand(3000, 3000, chunks=3000, seed=1)\nz = (a @ a).sum()\n")
	zdir, err := c.Walk(s + "/tensors/z")
	if err != nil {
		t.Fatalf("walk to a running graph's output: %v", err)
	}
	defer zdir.Close()
	if st := read(t, c, s+"/graphs/2/wait"); !strings.HasPrefix(st, "SUCCEEDED") {
		t.Fatalf("graph 2: %s", st)
	}
	_, text, err := zdir.Walk([]string{"text"})
	if err != nil {
		t.Fatalf("tensors/z/text, walked from the directory's fid kept from while graph 2 ran: %v", err)
	}
	text.Close()

	submit(t, c, s, "y = arange(6, chunks=4) * 2\n")
	read(t, c, s+"/graphs/3/wait")
	if got := read(t, c, s+"/tensors/y/meta"); strings.HasPrefix(got, "pending") || !strings.Contains(got, "int64") {
		t.Errorf("meta of a kept tensor: %q", got)
	}
}
