package asuser

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"marsfs/tensor/chunk"
)

// nobody is the owner the tests act for: uid and gid 65534, and the
// groups each test gives.
var nobody = chunk.Owner{Known: true, UID: 65534, GID: 65534}

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("acting for another user needs root")
	}
}

func openRoot(t *testing.T, dir string) *Root {
	t.Helper()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	r, err := New(root, "key")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func owner(t *testing.T, path string) (uid, gid uint32) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	s := st.Sys().(*syscall.Stat_t)
	return s.Uid, s.Gid
}

// TestActsWithOwnersRights: as root, acting for uid 65534, the kernel
// refuses a 0600 file of root's and a file made in root's 0755
// directory, with EACCES naming the path, and changes neither; what that
// uid makes in its own directory belongs to it; a group's file opens
// only for an owner in that group.
func TestActsWithOwnersRights(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret.npy")
	if err := os.WriteFile(secret, []byte("root's"), 0o600); err != nil {
		t.Fatal(err)
	}
	rootdir := filepath.Join(dir, "rootdir")
	os.Mkdir(rootdir, 0o755)
	mine := filepath.Join(dir, "mine")
	os.Mkdir(mine, 0o755)
	if err := os.Chown(mine, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	group := filepath.Join(dir, "group.npy")
	os.WriteFile(group, []byte("group's"), 0o640)
	os.Chown(group, 0, 4242)

	r := openRoot(t, dir)
	d, err := r.For(nobody)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Open("secret.npy"); !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "secret.npy") {
		t.Errorf("open secret.npy as 65534: %v, want permission denied naming it", err)
	}
	if _, err := d.OpenFile("rootdir/planted.npy", os.O_RDWR|os.O_CREATE, 0o644); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("create in root's directory as 65534: %v, want permission denied", err)
	}
	if err := d.Rename("secret.npy", "mine/stolen.npy"); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("rename root's file as 65534: %v, want permission denied", err)
	}
	if err := d.RemoveAll("rootdir"); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("remove root's directory as 65534: %v, want permission denied", err)
	}
	if b, _ := os.ReadFile(secret); string(b) != "root's" {
		t.Errorf("secret.npy now holds %q", b)
	}
	if _, err := os.Stat(rootdir); err != nil {
		t.Errorf("rootdir: %v", err)
	}
	if _, err := os.Stat(filepath.Join(rootdir, "planted.npy")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("planted.npy: %v, want none", err)
	}

	// What it makes is its own.
	if err := d.WriteFile("mine/a.npy", []byte("its"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := d.MkdirAll("mine/z.zarr/0", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"mine/a.npy", "mine/z.zarr", "mine/z.zarr/0"} {
		if uid, gid := owner(t, filepath.Join(dir, p)); uid != 65534 || gid != 65534 {
			t.Errorf("%s belongs to %d:%d, want 65534:65534", p, uid, gid)
		}
	}

	// Groups are the owner's, on its thread only.
	if _, err := d.Open("group.npy"); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("group.npy for 65534 without group 4242: %v, want permission denied", err)
	}
	inGroup := nobody
	inGroup.Groups = []uint32{100, 4242}
	dg, _ := r.For(inGroup)
	f, err := dg.Open("group.npy")
	if err != nil {
		t.Fatalf("group.npy for 65534 in group 4242: %v", err)
	}
	f.Close()
}

// TestThreadsRestored: after many acts for other users on many
// goroutines at once, every thread of the process has the process's
// filesystem ids and groups again.
func TestThreadsRestored(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f"), nil, 0o644)
	r := openRoot(t, dir)
	want, _ := os.ReadFile("/proc/self/status")
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			o := chunk.Owner{Known: true, UID: 60000 + uint32(i), GID: 60000 + uint32(i), Groups: []uint32{uint32(i) + 1}}
			d, _ := r.For(o)
			for range 20 {
				if _, err := d.Stat("f"); err != nil {
					t.Errorf("stat as %v: %v", o, err)
					return
				}
			}
		})
	}
	wg.Wait()
	tasks, err := filepath.Glob("/proc/self/task/*/status")
	if err != nil || len(tasks) == 0 {
		t.Fatalf("no tasks: %v", err)
	}
	for _, task := range tasks {
		got, err := os.ReadFile(task)
		if err != nil {
			continue // ended meanwhile
		}
		for _, field := range []string{"Uid:", "Gid:", "Groups:"} {
			if g, w := line(got, field), line(want, field); g != w {
				t.Errorf("%s: %s, want the process's %s", task, g, w)
			}
		}
	}
}

func line(status []byte, field string) string {
	for l := range bytes.Lines(status) {
		if bytes.HasPrefix(l, []byte(field)) {
			return strings.TrimSpace(string(l))
		}
	}
	return ""
}

// TestOwner maps identities to users: a login name and a uid to the
// user database's ids and groups, a uid it lacks to the overflow group,
// and the identities that are no user of this host to none (EACCES).
func TestOwner(t *testing.T) {
	r := openRoot(t, t.TempDir())
	o, err := r.Owner("root")
	if err != nil || !o.Known || o.UID != 0 || o.GID != 0 {
		t.Errorf("root: %+v, %v", o, err)
	}
	if o2, err := r.Owner("0"); err != nil || o2.UID != 0 || o2.GID != 0 {
		t.Errorf("0: %+v, %v", o2, err)
	}
	if o, err := r.Owner("3999999"); err != nil || o.UID != 3999999 || o.GID != OverflowGID || len(o.Groups) != 0 {
		t.Errorf("3999999: %+v, %v; want the uid in the overflow group", o, err)
	}
	for _, id := range []string{"key", "", "no-such-user-here"} {
		if o, err := r.Owner(id); o.Known || !errors.Is(err, fs.ErrPermission) {
			t.Errorf("%q: %+v, %v; want none, permission denied", id, o, err)
		}
	}
	if _, err := r.For(chunk.Owner{}); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("For(no user): %v, want permission denied", err)
	}
}

// TestNotRoot runs this test binary as uid 65534, where a Root acts for
// that uid alone, with its own rights, and refuses every other.
func TestNotRoot(t *testing.T) {
	if os.Getenv("ASUSER_CHILD_DIR") != "" {
		notRootChild(t, os.Getenv("ASUSER_CHILD_DIR"))
		return
	}
	needRoot(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A copy that uid 65534 can run, and a data directory of its own.
	tmp := t.TempDir()
	os.Chmod(tmp, 0o755)
	os.Chmod(filepath.Dir(tmp), 0o755) // TempDir makes its parent 0700
	bin := filepath.Join(tmp, "asuser.test")
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(tmp, "data")
	os.Mkdir(data, 0o755)
	os.Chown(data, 65534, 65534)
	cmd := exec.Command(bin, "-test.run=^TestNotRoot$", "-test.v")
	cmd.Env = append(os.Environ(), "ASUSER_CHILD_DIR="+data)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestNotRoot") {
		t.Fatalf("as uid 65534: %v\n%s", err, out)
	}
	if uid, _ := owner(t, filepath.Join(data, "own.npy")); uid != 65534 {
		t.Errorf("own.npy belongs to %d", uid)
	}
}

func notRootChild(t *testing.T, data string) {
	if os.Geteuid() != 65534 {
		t.Fatalf("child runs as %d", os.Geteuid())
	}
	r := openRoot(t, data)
	if _, err := r.For(chunk.Owner{Known: true, UID: 0, GID: 0}); !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "not as root") {
		t.Errorf("For(root) in a server of uid 65534: %v, want permission denied", err)
	}
	d, err := r.For(nobody)
	if err != nil {
		t.Fatalf("For(its own uid): %v", err)
	}
	if err := d.WriteFile("own.npy", []byte("x"), 0o644); err != nil {
		t.Errorf("its own file: %v", err)
	}
}

// BenchmarkOpen measures what acting for another user adds to an open
// and close: a thread of its own, three credentials set and restored.
func BenchmarkOpen(b *testing.B) {
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, "f"), nil, 0o644)
	root, err := os.OpenRoot(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer root.Close()
	r, err := New(root)
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		o    chunk.Owner
	}{{"self", chunk.Owner{Known: true, UID: uint32(os.Geteuid()), GID: uint32(os.Getegid())}}, {"other", nobody}} {
		d, err := r.For(tc.o)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				f, err := d.Open("f")
				if err != nil {
					b.Fatal(err)
				}
				f.Close()
			}
		})
	}
	b.Run("os.Root", func(b *testing.B) {
		for b.Loop() {
			f, err := root.Open("f")
			if err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
	})
}
