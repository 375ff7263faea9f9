package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"marsfs/exec/sched"
	"marsfs/tensor"
)

// smallDisk mounts a tmpfs of size bytes for the test (as root; the test
// is skipped otherwise) and unmounts it at the end.
func smallDisk(t *testing.T, size int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+strconv.Itoa(size)); err != nil {
		t.Skipf("mount tmpfs: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fillDisk writes a file in dir until the disk is full, and returns a
// function that removes it.
func fillDisk(t *testing.T, dir string) func() {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	block := make([]byte, 4096)
	for {
		if _, err := f.Write(block); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	// The last bytes: a block may not have fit whole.
	for {
		if _, err := f.Write(block[:1]); err != nil {
			break
		}
	}
	f.Close()
	return func() {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	}
}

// pageAlign submits specs padded with a comment until the session's
// journal file ends at a page's end: tmpfs gives space by pages, and a
// record may fit in what a file's last page has left, full disk or not.
func pageAlign(t *testing.T, s *Session, path string) {
	t.Helper()
	size := func() int64 {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	spec := func(pad int) string { return "# " + strings.Repeat("x", pad) + "\nz = ones(1)\n" }
	// A graph writes its submit, the tensor it kept and its end, whose
	// lengths move with the numbers in them: measure, pad, measure again.
	pad := 100
	for range 8 {
		before := size()
		waitOK(t, mustSubmit(t, s, spec(pad)))
		after := size()
		if after%4096 == 0 {
			return
		}
		// The next graph's records are this one's, but for the pad.
		pad = pad - int(after-before) + int(4096-after%4096)
		for pad < 0 {
			pad += 4096
		}
	}
	t.Fatalf("journal file of %d bytes, not page-aligned", size())
}

// TestRefusedWhenNotDurable fills the state dir's disk under a session:
// a submit, an upload, a drop and a close are each refused with ENOSPC
// and the reason in the session's error, and change nothing (no graph
// runs, the upload's chunks are freed, the tensor stays, the session
// stays); a new session is refused too. Once there is room the session
// goes on, and an engine restored from the journal finds exactly what
// was acknowledged.
func TestRefusedWhenNotDurable(t *testing.T) {
	dir := smallDisk(t, 256<<10)
	r := sched.NewLocal(2)
	t.Cleanup(func() { r.Close() })
	e1, _ := journaled(t, r, dir)
	t.Cleanup(e1.Close) // before the unmount: it holds the files open
	s, err := e1.NewSession("glenda")
	if err != nil {
		t.Fatal(err)
	}
	waitOK(t, mustSubmit(t, s, "a = arange(100, chunks=10) * 2\nfetch a\n"))
	pageAlign(t, s, filepath.Join(dir, "session-"+strconv.Itoa(s.ID())+".journal"))
	room := fillDisk(t, dir)
	// A record longer than a page: tmpfs fills by pages, and a short one
	// may fit in what the file's last page has left.
	long := "# " + strings.Repeat("x", 8192) + "\n"

	isENOSPC := func(what string, err error) {
		t.Helper()
		var we *WriteError
		if !errors.Is(err, syscall.ENOSPC) || !errors.As(err, &we) {
			t.Fatalf("%s on a full disk: %v, want a WriteError wrapping ENOSPC", what, err)
		}
	}
	if _, err := s.Submit(long + "b = a + 1\nfetch b\n"); true {
		isENOSPC("submit", err)
	}
	if msg := s.Error(); !strings.Contains(msg, "submit refused") || !strings.Contains(msg, "no space left on device") {
		t.Errorf("error file after the refused submit: %q", msg)
	}
	graphs := len(s.Graphs())
	if n := len(s.Graphs()); n != graphs {
		t.Errorf("%d graphs after a refused submit, want %d", n, graphs)
	}
	if _, ok := s.Tensor("b"); ok {
		t.Error("the refused submit's graph ran")
	}
	// An upload of many chunks: its record is longer than a page.
	u, err := s.BeginUpload("u", tensor.Float64, []int{400}, [][]int{slices.Repeat([]int{1}, 400)})
	if err != nil {
		t.Fatal(err)
	}
	for k := range 400 {
		if err := u.Put(context.Background(), k, tensor.NewArray(tensor.Float64, []int{1})); err != nil {
			t.Fatal(err)
		}
	}
	isENOSPC("upload", u.Commit())
	if _, ok := s.Tensor("u"); ok {
		t.Error("the refused upload named a tensor")
	}
	if w := r.Where(u.Tiled().Keys[0]); w != "" {
		t.Errorf("the refused upload's chunk is still held on %s", w)
	}
	isENOSPC("drop", s.Drop("a"))
	if _, ok := s.Tensor("a"); !ok {
		t.Error("the refused drop dropped")
	}
	if _, err := e1.NewSession("rob"); true {
		isENOSPC("a new session", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("the state dir holds %d files after a refused session, want the session's and the filler", len(ents))
	}

	room()
	waitOK(t, mustSubmit(t, s, "c = a + 3\nfetch c\n"))
	want := fetch(t, s, "c")
	e1.Close() // with a journal: the session stays

	e2, loaded := journaled(t, r, dir)
	defer e2.Close()
	if _, err := e2.Restore(loaded); err != nil {
		t.Fatal(err)
	}
	s2, ok := e2.Session(s.ID())
	if !ok {
		t.Fatal("session not restored")
	}
	if got := s2.Tensors(); strings.Join(got, " ") != "a c z" {
		t.Errorf("restored tensors %v, want a c z", got)
	}
	if n := len(s2.Graphs()); n != graphs+1 {
		t.Errorf("restored %d graphs, want the %d acknowledged", n, graphs+1)
	}
	sameArray(t, "c", fetch(t, s2, "c"), want)
}

// TestCloseRefused: a close whose journal file cannot be removed is
// refused, and the session goes on.
func TestCloseRefused(t *testing.T) {
	dir := t.TempDir()
	r := sched.NewLocal(1)
	t.Cleanup(func() { r.Close() })
	e, _ := journaled(t, r, dir)
	defer e.Close()
	s, err := e.NewSession("glenda")
	if err != nil {
		t.Fatal(err)
	}
	// A file that cannot be removed, even by root: a non-empty directory
	// in its place.
	path := filepath.Join(dir, "session-"+strconv.Itoa(s.ID())+".journal")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(path, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	err = s.Close()
	var we *WriteError
	if !errors.As(err, &we) || we.Op != "close" {
		t.Fatalf("close whose file cannot be removed: %v", err)
	}
	if _, ok := e.Session(s.ID()); !ok {
		t.Fatal("the refused close closed the session")
	}
	os.RemoveAll(path)
}

// TestRestoreFreesWhatItLoses: a session whose journal is read back but
// cannot be taken up again (its file cannot be reopened) is lost, and its
// chunks are freed on the workers rather than kept for no one.
func TestRestoreFreesWhatItLoses(t *testing.T) {
	r := sched.NewLocal(1)
	t.Cleanup(func() { r.Close() })
	dir := t.TempDir()
	e1, _ := journaled(t, r, dir)
	s, err := e1.NewSession("glenda")
	if err != nil {
		t.Fatal(err)
	}
	waitOK(t, mustSubmit(t, s, "a = arange(100, chunks=10) * 2\nfetch a\n"))
	a, _ := s.Tensor("a")
	ids := a.Tiled().Keys
	e1.Close() // with a journal: the session and its chunks stay
	if w := r.Where(ids[0]); w == "" {
		t.Fatal("the chunks went with the engine")
	}
	e2, loaded := journaled(t, r, dir)
	defer e2.Close()
	// The file read back is replaced by a directory: neither rewritten
	// nor reopened.
	path := filepath.Join(dir, "session-"+strconv.Itoa(s.ID())+".journal")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(path, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(path)
	res, err := e2.Restore(loaded)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Lost) != 1 || res.Sessions != 0 {
		t.Fatalf("restored %d, lost %v: want the session lost", res.Sessions, res.Lost)
	}
	for _, id := range ids {
		if w := r.Where(id); w != "" {
			t.Errorf("chunk %d of the lost session still held on %s", id, w)
		}
	}
}
