// Command marsfs runs and uses marsfs, a distributed chunked-tensor engine
// served as a 9P2000.L file tree.
//
// Usage:
//
//	marsfs [up] [flags]        scheduler, 9P server and local worker processes
//	marsfs scheduler [flags]   scheduler and 9P server
//	marsfs worker [flags]      a worker
//	marsfs ls PATH             list a directory of the tree
//	marsfs cat PATH...         print files of the tree
//	marsfs write PATH          write standard input to a file of the tree
//	marsfs run SPEC            run a spec (a file, or - for standard input)
//	marsfs mount DIR           mount the tree on DIR with FUSE
//
// The client verbs (ls, cat, write, run, mount) reach the server at --addr, or
// $MARSFS_ADDR, or 127.0.0.1:5640; an address starting with / or unix: is
// a unix socket.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
)

const usage = `usage:
  marsfs [up] [flags]        scheduler, 9P server and local worker processes
  marsfs scheduler [flags]   scheduler and 9P server
  marsfs worker [flags]      a worker
  marsfs ls PATH             list a directory of the tree
  marsfs cat PATH...         print files of the tree
  marsfs write PATH          write standard input to a file of the tree
  marsfs run SPEC            run a spec (a file, or - for standard input)
  marsfs mount DIR           mount the tree on DIR with FUSE
Run "marsfs COMMAND -h" for the flags of a command.
`

var commands = map[string]func(args []string) error{
	"up":        up,
	"scheduler": schedulerCmd,
	"worker":    workerCmd,
	"ls":        ls,
	"cat":       cat,
	"write":     write,
	"run":       run,
	"mount":     mount,
}

func main() {
	args := os.Args[1:]
	name := "up"
	if len(args) > 0 && (len(args[0]) == 0 || args[0][0] != '-') {
		name, args = args[0], args[1:]
	}
	if name == "help" {
		fmt.Print(usage)
		return
	}
	cmd, ok := commands[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "marsfs: unknown command %q\n%s", name, usage)
		os.Exit(2)
	}
	if err := cmd(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		var ex exitError
		if errors.As(err, &ex) {
			os.Exit(int(ex))
		}
		fmt.Fprintf(os.Stderr, "marsfs %s: %v\n", name, err)
		os.Exit(1)
	}
}

// exitError ends the command with a status, its message printed already.
type exitError int

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// parse parses a command's flags; positional arguments may come before or
// after them.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}
