package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"hash/crc32"
	"io/fs"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hugelgupf/p9/linux"

	mfs "marsfs/fs"
	"marsfs/tensor"
	"marsfs/tensor/codec"
)

// TestFilesWithOwnersRights is issue 32's measurement: `up --data-dir D`
// runs as root, and a client runs as uid 65534 (over loopback TCP, then
// over the unix socket). A 0600 file of root's through from_npy is
// refused at the write with EACCES naming it; to_npy into root's 0755
// directory (a new file, and overwrite=True on root's file) and to_zarr
// with overwrite=True on root's store fail their graphs with permission
// denied and the path; every file of root's is left as it was, bytes and
// modification times. The same uid reads and writes its own files, and
// what it writes belongs to it.
func TestFilesWithOwnersRights(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("acting for another user needs root")
	}
	bin := build(t)
	pub := publicCopy(t, bin)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	client := publicCopy(t, exe) // this test binary, as the client below

	data := t.TempDir()
	os.Chmod(data, 0o755)
	w := tensor.NewArray(tensor.Int64, []int{6})
	for i, v := range w.Int64s() {
		w.Int64s()[i] = v + int64(i)
	}
	var npy bytes.Buffer
	if err := codec.WriteNPY(&npy, w); err != nil {
		t.Fatal(err)
	}
	write := func(name string, perm os.FileMode, uid int) {
		p := filepath.Join(data, name)
		if err := os.WriteFile(p, npy.Bytes(), perm); err != nil {
			t.Fatal(err)
		}
		os.Chown(p, uid, uid)
	}
	os.Mkdir(filepath.Join(data, "rootdir"), 0o755)
	os.Mkdir(filepath.Join(data, "nobody"), 0o755)
	os.Chown(filepath.Join(data, "nobody"), 65534, 65534)
	write("secret.npy", 0o600, 0)
	write("rootdir/precious.npy", 0o644, 0)
	write("nobody/own.npy", 0o644, 65534)

	up := startUp(t, pub, "--workers", "1", "--data-dir", data)
	// Root's store, written through marsfs by root.
	root, err := mfs.Dial(up.unx)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	rs := newSession(t, root)
	submitOK(t, root, rs, "w = arange(6, chunks=2)\nto_zarr(w, \"store.zarr\")\n")
	if st := readText(t, root, rs+"/graphs/last/wait"); !strings.HasPrefix(st, "SUCCEEDED") {
		t.Fatalf("root's to_zarr: %s", st)
	}
	before := snapshot(t, data, "secret.npy", "rootdir", "store.zarr")

	// The unix socket, made reachable to other users as an administrator
	// would.
	sock := strings.TrimPrefix(up.unx, "unix:")
	os.Chmod(sock, 0o666)
	os.Chmod(filepath.Dir(sock), 0o755)
	os.Chmod(filepath.Dir(filepath.Dir(sock)), 0o755)

	for _, addr := range []string{up.tcp, up.unx} {
		as := func(spec string) clientResult { return runAs(t, client, addr, spec) }
		r := as("leak = from_npy(\"secret.npy\")\n")
		t.Logf("%s: secret.npy: %s: %s", addr, syscall.Errno(r.Errno), strings.TrimSpace(r.Error))
		if r.Errno != int(syscall.EACCES) || !strings.Contains(r.Error, `"secret.npy"`) || !strings.Contains(r.Error, "permission denied") {
			t.Errorf("%s: from_npy of root's 0600 file: %+v, want EACCES naming it", addr, r)
		}
		for _, spec := range []string{
			"w = arange(6, chunks=2)\nto_npy(w, \"rootdir/planted.npy\")\n",
			"w = arange(6, chunks=2)\nto_npy(w, \"rootdir/precious.npy\", overwrite=True)\n",
			"w = arange(6, chunks=2)\nto_zarr(w, \"store.zarr\", overwrite=True)\n",
		} {
			path := spec[strings.Index(spec, "\"")+1 : strings.LastIndex(spec, "\"")]
			r := as(spec)
			t.Logf("%s: %s: %s: %s", addr, path, r.State, strings.TrimSpace(r.Graph))
			if r.Errno != 0 || r.State != "FAILED" || !strings.Contains(r.Graph, `"`+path+`"`) || !strings.Contains(r.Graph, "permission denied") {
				t.Errorf("%s: %q: %+v, want a FAILED graph, permission denied on %q", addr, spec, r, path)
			}
		}
		if after := snapshot(t, data, "secret.npy", "rootdir", "store.zarr"); after != before {
			t.Errorf("%s: root's files changed:\n%s\nwere:\n%s", addr, after, before)
		}

		// Its own files: read, written, overwritten, and its own after.
		r = as(`x = from_npy("nobody/own.npy")
to_npy(x * 2, "nobody/out.npy", overwrite=True)
to_npy(x + 1, "nobody/own.npy", overwrite=True)
to_zarr(x, "nobody/out.zarr", overwrite=True)
s = x.sum()
`)
		if r.Errno != 0 || r.State != "SUCCEEDED" {
			t.Fatalf("%s: uid 65534 on its own files: %+v", addr, r)
		}
		err := filepath.WalkDir(filepath.Join(data, "nobody"), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			st, err := os.Lstat(p)
			if err != nil {
				return err
			}
			if s := st.Sys().(*syscall.Stat_t); s.Uid != 65534 || s.Gid != 65534 {
				t.Errorf("%s belongs to %d:%d, want 65534:65534", p, s.Uid, s.Gid)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(data, "nobody/out.zarr/.zarray")); err != nil {
			t.Errorf("out.zarr: %v", err)
		}
		write("nobody/own.npy", 0o644, 65534) // for the next round
	}
	up.stop(t)
}

// snapshot describes the files under the names in dir: each path, its
// mode, owner, size, modification time and bytes' checksum.
func snapshot(t *testing.T, dir string, names ...string) string {
	t.Helper()
	var b strings.Builder
	for _, n := range names {
		err := filepath.WalkDir(filepath.Join(dir, n), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			st, err := os.Lstat(p)
			if err != nil {
				return err
			}
			s := st.Sys().(*syscall.Stat_t)
			var body []byte
			if !d.IsDir() {
				if body, err = os.ReadFile(p); err != nil {
					return err
				}
			}
			rel, _ := filepath.Rel(dir, p)
			b.WriteString(strings.Join([]string{rel, st.Mode().String(), itoa(int(s.Uid)), itoa(int(st.Size())), st.ModTime().Format(time.RFC3339Nano), itoa(int(crc32.ChecksumIEEE(body)))}, " ") + "\n")
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

func itoa(n int) string { return strconv.Itoa(n) }

// clientResult is what the client of runAs saw: the errno of the write
// (or close) of submit, the session's error file, and the graph's final
// state and error when it was submitted.
type clientResult struct {
	Errno int
	Error string
	State string
	Graph string
}

// runAs runs this test binary as uid 65534 (gid 65534, no other group),
// as a 9P client of addr that submits spec in a new session.
func runAs(t *testing.T, bin, addr, spec string) clientResult {
	t.Helper()
	cmd := osexec.Command(bin, "-test.run=^TestOwnerClient$")
	cmd.Env = append(os.Environ(), "MARSFS_TEST_CLIENT_ADDR="+addr, "MARSFS_TEST_CLIENT_SPEC="+spec)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("client as uid 65534: %v\n%s%s", err, out.String(), errb.String())
	}
	var r clientResult
	line := out.String()
	i := strings.Index(line, "{")
	j := strings.LastIndex(line, "}")
	if i < 0 || j < i || json.Unmarshal([]byte(line[i:j+1]), &r) != nil {
		t.Fatalf("client as uid 65534 said:\n%s%s", out.String(), errb.String())
	}
	return r
}

// TestOwnerClient is the client of runAs, run only by it.
func TestOwnerClient(t *testing.T) {
	addr := os.Getenv("MARSFS_TEST_CLIENT_ADDR")
	if addr == "" {
		t.Skip("the client of TestFilesWithOwnersRights")
	}
	c, err := mfs.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	id, err := c.ReadFile("/sessions/clone")
	if err != nil {
		t.Fatal(err)
	}
	sess := "/sessions/" + strings.TrimSpace(string(id))
	defer c.WriteFile(sess+"/ctl", []byte("close\n"))
	var r clientResult
	if err := c.WriteFile(sess+"/submit", []byte(os.Getenv("MARSFS_TEST_CLIENT_SPEC"))); err != nil {
		var errno linux.Errno
		if !errors.As(err, &errno) {
			t.Fatalf("submit: %v (%T)", err, err)
		}
		r.Errno = int(errno)
		msg, _ := c.ReadFile(sess + "/error")
		r.Error = string(msg)
	} else {
		st, err := c.ReadFile(sess + "/graphs/1/wait")
		if err != nil {
			t.Fatal(err)
		}
		r.State, _, _ = strings.Cut(string(st), "\n")
		msg, _ := c.ReadFile(sess + "/graphs/1/error")
		r.Graph = string(msg)
	}
	b, _ := json.Marshal(r)
	os.Stdout.Write(append(b, '\n'))
}
