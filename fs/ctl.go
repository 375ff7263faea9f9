package fs

import (
	"fmt"
	"strings"

	"marsfs/exec/engine"
)

// A verb is one message a ctl file takes: "name arg...", with exactly
// nargs arguments, matched whole (as Plan 9's file servers match theirs:
// "closex" is no "close").
type verb[T any] struct {
	name  string
	nargs int
	usage string // the arguments, for the error of a wrong count
	do    func(target T, args []string) error
}

// sessionVerbs are the messages of /sessions/N/ctl.
var sessionVerbs = []verb[*engine.Session]{
	{"close", 0, "", func(s *engine.Session, _ []string) error {
		return s.Close()
	}},
	{"set", 2, "NAME on|off", setOption},
}

// graphVerbs are the messages of /sessions/N/graphs/G/ctl.
var graphVerbs = []verb[*engine.Graph]{
	{"cancel", 0, "", func(g *engine.Graph, _ []string) error {
		g.Cancel()
		return nil
	}},
}

// ctl carries out msg with the verb table verbs, on target.
func ctl[T any](verbs []verb[T], target T, msg string) error {
	f := strings.Fields(msg)
	if len(f) == 0 {
		return nil
	}
	for _, v := range verbs {
		if f[0] != v.name {
			continue
		}
		if len(f)-1 != v.nargs {
			return fmt.Errorf("%s: want %q, not %q", v.name, strings.TrimSpace(v.name+" "+v.usage), strings.Join(f, " "))
		}
		return v.do(target, f[1:])
	}
	return fmt.Errorf("unknown control message %q", strings.Join(f, " "))
}

// setOption carries out "set NAME on|off".
func setOption(s *engine.Session, args []string) error {
	on, ok := map[string]bool{"on": true, "true": true, "1": true, "off": false, "false": false, "0": false}[args[1]]
	if !ok {
		return fmt.Errorf("set %s: want on or off, not %q", args[0], args[1])
	}
	opt := s.Options()
	switch args[0] {
	case "fuse_enabled":
		opt.Fuse = on
	case "fuse_expr":
		opt.FuseExpr = on
	default:
		return fmt.Errorf("unknown setting %q", args[0])
	}
	s.SetOptions(opt)
	return nil
}
