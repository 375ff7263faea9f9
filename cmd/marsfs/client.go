package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"

	"marsfs/exec/wire"
	"marsfs/fs"
)

// DefaultAddr is where the client verbs find the server by default.
const DefaultAddr = "127.0.0.1:5640"

// A target is the server a client verb talks to, and the key it proves.
type target struct {
	addr    string
	keyFile string
}

func clientFlags(name string) (*flag.FlagSet, *target) {
	f := flag.NewFlagSet(name, flag.ContinueOnError)
	def := os.Getenv("MARSFS_ADDR")
	if def == "" {
		def = DefaultAddr
	}
	t := new(target)
	f.StringVar(&t.addr, "addr", def, "server address: host:port, or a unix socket path (/path or unix:path); $MARSFS_ADDR")
	f.StringVar(&t.keyFile, "key-file", "", "file holding the cluster's shared secret, for a server beyond loopback (default $MARSFS_KEY)")
	return f, t
}

// key loads the target's key: nil when neither --key-file nor
// $MARSFS_KEY gives one.
func (t *target) key() ([]byte, error) { return wire.LoadKey(t.keyFile) }

func (t *target) dial() (*fs.Client, error) {
	key, err := t.key()
	if err != nil {
		return nil, err
	}
	c, err := fs.DialKey(t.addr, key)
	if err != nil {
		return nil, fmt.Errorf("connect to marsfs at %s: %w", t.addr, err)
	}
	return c, nil
}

// ls lists directories of the tree, directories with a trailing slash.
func ls(args []string) error {
	f, addr := clientFlags("ls")
	paths, err := parse(f, args)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		paths = []string{"/"}
	}
	c, err := addr.dial()
	if err != nil {
		return err
	}
	defer c.Close()
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	for i, p := range paths {
		ents, err := c.ReadDir(p)
		if fs.IsErrno(err, linux.EINVAL) || fs.IsErrno(err, linux.ENOTDIR) {
			fmt.Fprintln(w, p) // a file lists as itself
			continue
		}
		if err != nil {
			return err
		}
		if len(paths) > 1 {
			if i > 0 {
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "%s:\n", p)
		}
		for _, e := range ents {
			suffix := ""
			if e.Type == p9.TypeDir {
				suffix = "/"
			}
			fmt.Fprintf(w, "%s%s\n", e.Name, suffix)
		}
	}
	return nil
}

// cat copies files of the tree to standard output.
func cat(args []string) error {
	f, addr := clientFlags("cat")
	paths, err := parse(f, args)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return errors.New("usage: marsfs cat PATH...")
	}
	c, err := addr.dial()
	if err != nil {
		return err
	}
	defer c.Close()
	buf := make([]byte, fs.ClientMsize-4096)
	for _, p := range paths {
		file, err := c.Open(p, p9.ReadOnly)
		if err != nil {
			return explainClone(p, err)
		}
		_, err = io.CopyBuffer(struct{ io.Writer }{os.Stdout}, struct{ io.Reader }{file}, buf)
		file.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// write copies standard input to a file of the tree. A refused write
// prints the session's error text, which says why.
func write(args []string) error {
	f, addr := clientFlags("write")
	paths, err := parse(f, args)
	if err != nil {
		return err
	}
	if len(paths) != 1 {
		return errors.New("usage: marsfs write PATH < data")
	}
	c, err := addr.dial()
	if err != nil {
		return err
	}
	defer c.Close()
	path := paths[0]
	var file *fs.File
	if dir, name, ok := cutLast(path); ok && strings.HasSuffix(dir, "/tensors") && strings.HasSuffix(name, ".npy") {
		file, err = c.Create(dir, name)
	} else {
		file, err = c.Open(path, p9.WriteOnly)
	}
	if err != nil {
		return explain(c, path, err)
	}
	buf := make([]byte, fs.ClientMsize-4096)
	_, err = io.CopyBuffer(struct{ io.Writer }{file}, struct{ io.Reader }{os.Stdin}, buf)
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return explain(c, path, err)
	}
	return nil
}

func cutLast(path string) (dir, name string, ok bool) {
	i := strings.LastIndexByte(path, '/')
	if i < 0 {
		return "", "", false
	}
	return path[:i], path[i+1:], true
}

// sessionOf returns the /sessions/N directory path lies in.
func sessionOf(path string) (string, bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) >= 2 && parts[0] == "sessions" && parts[1] != "clone" {
		return "/sessions/" + parts[1], true
	}
	return "", false
}

// explainClone says why a clone was refused, when the errno tells: a new
// session has no error file to say it in.
func explainClone(path string, err error) error {
	if strings.Trim(path, "/") != "sessions/clone" {
		return err
	}
	switch {
	case fs.IsErrno(err, linux.ENOSPC):
		return fmt.Errorf("%w: the server's --state-dir is full, and a session it cannot journal is not made", err)
	case fs.IsErrno(err, linux.EIO):
		return fmt.Errorf("%w: the server could not make a session (its log says why)", err)
	}
	return err
}

// explain adds the session's error text to err, the errno of a refused
// write, when path is in a session.
func explain(c *fs.Client, path string, err error) error {
	if sess, ok := sessionOf(path); ok {
		if msg, rerr := c.ReadFile(sess + "/error"); rerr == nil && len(msg) > 0 {
			return fmt.Errorf("%w\n%s", err, strings.TrimRight(string(msg), "\n"))
		}
	}
	return err
}
