package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"marsfs/fs"
)

// run clones a session, submits a spec, waits for its graph and prints
// each output as text. A refused spec prints the session's error, a failed
// graph its error and status; both exit 1. The session is closed at the
// end, freeing its chunks.
func run(args []string) error {
	f, addr := clientFlags("run")
	paths, err := parse(f, args)
	if err != nil {
		return err
	}
	if len(paths) != 1 {
		return errors.New("usage: marsfs run SPEC (a file, or - for standard input)")
	}
	var spec []byte
	if paths[0] == "-" {
		spec, err = io.ReadAll(os.Stdin)
	} else {
		spec, err = os.ReadFile(paths[0])
	}
	if err != nil {
		return err
	}
	c, err := addr.dial()
	if err != nil {
		return err
	}
	defer c.Close()

	id, err := c.ReadFile("/sessions/clone")
	if err != nil {
		return explainClone("/sessions/clone", err)
	}
	sess := "/sessions/" + strings.TrimSpace(string(id))
	defer c.WriteFile(sess+"/ctl", []byte("close\n"))

	// A refused spec: its message starts "line:col: ", and is shown as
	// compilers show theirs, after the file name.
	refused := func(err error) error {
		msg, _ := c.ReadFile(sess + "/error")
		if len(msg) == 0 {
			return err
		}
		where := paths[0] + ":"
		if paths[0] == "-" {
			where = ""
		}
		fmt.Fprintf(os.Stderr, "marsfs run: %s%s", where, line(string(msg)))
		return exitError(1)
	}
	if err := c.WriteFile(sess+"/submit", spec); err != nil {
		return refused(err)
	}
	// The clunk submits: a spec refused there makes no graph.
	g, err := c.Walk(sess + "/graphs/1")
	if err != nil {
		return refused(err)
	}
	g.Close()
	status, err := c.ReadFile(sess + "/graphs/1/wait")
	if err != nil {
		return err
	}
	state, _, _ := strings.Cut(string(status), "\n")
	if state != "SUCCEEDED" {
		msg, _ := c.ReadFile(sess + "/graphs/1/error")
		fmt.Fprintf(os.Stderr, "marsfs run: graph %s\n%s", state, line(string(msg)))
		fmt.Fprintf(os.Stderr, "status:\n%s", status)
		return exitError(1)
	}
	names, err := outputs(c, sess)
	if err != nil {
		return err
	}
	for _, name := range names {
		text, err := c.ReadFile(sess + "/tensors/" + name + "/text")
		if err != nil {
			return err
		}
		if len(names) > 1 {
			fmt.Printf("%s:\n", name)
		}
		fmt.Print(line(string(text)))
	}
	return nil
}

// outputs names the outputs of the session's first graph in the order the
// spec fetches them (from spec.json), or else the session's tensors.
func outputs(c *fs.Client, sess string) ([]string, error) {
	var doc struct {
		Outputs []struct{ Name string } `json:"outputs"`
	}
	if b, err := c.ReadFile(sess + "/graphs/1/spec.json"); err == nil && json.Unmarshal(b, &doc) == nil && len(doc.Outputs) > 0 {
		var names []string
		for _, o := range doc.Outputs {
			names = append(names, o.Name)
		}
		return names, nil
	}
	ents, err := c.ReadDir(sess + "/tensors")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name)
	}
	return names, nil
}

func line(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}
