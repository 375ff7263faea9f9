package main

import (
	"errors"
	"fmt"
	"time"
)

// ready waits until the server at --addr serves its tree, and creates
// nothing on it (a read of /sessions/clone would make a session): it dials,
// speaks 9P and reads the tree's README. It retries while nothing listens
// or the server hangs up (starting, or restarting), and gives up after
// --timeout with the last error.
func ready(args []string) error {
	f, addr := clientFlags("ready")
	timeout := f.Duration("timeout", 2*time.Minute, "how long to wait for the server")
	quiet := f.Bool("q", false, "print nothing when ready")
	paths, err := parse(f, args)
	if err != nil {
		return err
	}
	if len(paths) != 0 {
		return errors.New("usage: marsfs ready [--addr ADDR] [--timeout 2m]")
	}
	deadline := time.Now().Add(*timeout)
	wait := 20 * time.Millisecond
	for {
		err := probe(addr)
		if err == nil {
			if !*quiet {
				fmt.Printf("marsfs at %s is ready\n", addr.addr)
			}
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %v: %w", *timeout, err)
		}
		// Nothing to wait on but the clock: the server is another
		// process, maybe not started yet.
		time.Sleep(wait)
		wait = min(2*wait, 500*time.Millisecond)
	}
}

// probe dials the target and reads its README.
func probe(t *target) error {
	c, err := t.dial()
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.ReadFile("/README")
	return err
}
