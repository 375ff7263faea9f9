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
//	marsfs version             print the version
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
	"runtime/debug"
)

const usage = `usage:
  marsfs [up] [flags]        scheduler, 9P server and local worker processes
  marsfs scheduler [flags]   scheduler and 9P server
  marsfs worker [flags]      a worker
  marsfs ls PATH             list a directory of the tree
  marsfs cat PATH...         print files of the tree
  marsfs write PATH          write standard input to a file of the tree
  marsfs run SPEC            run a spec (a file, or - for standard input)
  marsfs ready               wait until the server serves (creates nothing)
  marsfs mount DIR           mount the tree on DIR with FUSE
  marsfs version             print the version
Run "marsfs COMMAND -h" for the flags of a command. Sizes take units:
64M, 2GiB (powers of 1024), 500MB (powers of 1000).
`

var commands = map[string]func(args []string) error{
	"up":        up,
	"scheduler": schedulerCmd,
	"worker":    workerCmd,
	"ls":        ls,
	"cat":       cat,
	"write":     write,
	"run":       run,
	"ready":     ready,
	"mount":     mount,
	"version":   version,
}

func main() {
	args := os.Args[1:]
	name := "up"
	if len(args) > 0 && (len(args[0]) == 0 || args[0][0] != '-') {
		name, args = args[0], args[1:]
	}
	if name == "help" || name == "up" && len(args) == 1 && isHelp(args[0]) && len(os.Args) == 2 {
		// marsfs -h lists the commands; marsfs up -h gives up's flags.
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

func isHelp(arg string) bool { return arg == "-h" || arg == "-help" || arg == "--help" }

// version prints the build's version: the module's, or the commit it was
// built from, and Go's.
func version(args []string) error {
	v := "marsfs (devel)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = "marsfs " + bi.Main.Version
		}
		var rev, dirty string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "+modified"
				}
			}
		}
		if rev != "" {
			v += " commit " + rev[:min(12, len(rev))] + dirty
		}
		v += " " + bi.GoVersion
	}
	fmt.Println(v)
	return nil
}
