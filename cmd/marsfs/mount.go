package main

import (
	"errors"
	"fmt"
	"net"

	"marsfs/fs/fusefs"
)

// mount mounts the tree of a running server on a directory with FUSE, until
// SIGINT or SIGTERM, or until it is unmounted.
func mount(args []string) error {
	f, addr := clientFlags("mount")
	debug := f.Bool("debug", false, "log every FUSE request")
	allowOther := f.Bool("allow-other", false, "let other users use the mount (as the mounting user)")
	pos, err := parse(f, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New("usage: marsfs mount [--addr ADDR] DIR")
	}
	key, err := addr.key()
	if err != nil {
		return err
	}
	m, err := fusefs.New(pos[0], addr.addr, fusefs.Options{Debug: *debug, AllowOther: *allowOther, Key: key})
	if err != nil {
		return err
	}
	fmt.Printf("marsfs: mounted %s at %s\n", addr.addr, m.Dir())
	ctx, stop := signals()
	defer stop()
	gone := make(chan struct{})
	go func() { m.Wait(); close(gone) }()
	select {
	case <-ctx.Done():
		return m.Unmount()
	case <-gone: // unmounted from outside (umount, fusermount3 -u)
		m.Unmount()
		return nil
	}
}

// mountOn mounts the tree served on ls at dir, as a client of the unix
// socket when there is one (the identity of a unix peer is the kernel's
// word), else of the TCP listener.
func mountOn(dir string, ls []net.Listener) (*fusefs.Mount, error) {
	var addr string
	for _, l := range ls {
		a := l.Addr()
		switch {
		case a.Network() == "unix":
			addr = "unix:" + a.String()
		case addr == "":
			addr = a.String()
		}
	}
	m, err := fusefs.New(dir, addr, fusefs.Options{})
	if err != nil {
		return nil, err
	}
	fmt.Printf("marsfs: mounted at %s\n", m.Dir())
	return m, nil
}
