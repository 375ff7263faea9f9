package marsfs_test

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// The layering docs/architecture.md states, checked against what `go list`
// says the packages import. A group is a list of import paths, each
// standing for itself and the packages under it.
var (
	planning = []string{"marsfs/tensor/spec", "marsfs/tensor/tile", "marsfs/tensor/fuse"}
	kernels  = []string{"marsfs/tensor/kernel", "marsfs/tensor/internal/gemm", "marsfs/tensor/internal/openblas"}
	codecs   = []string{"marsfs/tensor/codec"}
	// language is the spec language, above the graph (tensor/spec) that
	// the planners read.
	language = []string{"marsfs/tensor/spec/lang"}
	planners = []string{"marsfs/tensor/tile", "marsfs/tensor/fuse"}
	cores    = []string{"marsfs/exec/core", "marsfs/exec/plan"}
	// above are the packages the tensor tree must not reach.
	above = []string{"marsfs/exec", "marsfs/fs", "marsfs/cluster", "marsfs/shm", "marsfs/cmd", "marsfs/bench"}
	// io are the packages that do I/O or reach the operating system, which
	// a pure core must not import itself (fmt reaches os, so deps cannot
	// be checked for them, only imports).
	io_ = []string{"net", "os", "syscall", "golang.org/x/sys", "io/ioutil", "plugin"}
)

// A goPackage is what `go list -json` says of one package.
type goPackage struct {
	ImportPath string
	Imports    []string // its own imports
	Deps       []string // everything it reaches
	Standard   bool
}

// in reports whether path is one of group's packages or under one.
func in(path string, group []string) bool {
	return slices.ContainsFunc(group, func(g string) bool { return path == g || strings.HasPrefix(path, g+"/") })
}

// thirdParty reports whether path is outside the standard library and
// marsfs (its first element names a host).
func thirdParty(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return strings.Contains(first, ".")
}

// module is the (likely) module of a third-party package: its first three
// path elements (github.com/owner/name, gonum.org/v1/gonum).
func module(path string) string {
	parts := strings.SplitN(path, "/", 4)
	return strings.Join(parts[:min(3, len(parts))], "/")
}

func listPackages(t *testing.T) map[string]*goPackage {
	t.Helper()
	gocmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	cmd := exec.Command(gocmd, "list", "-e", "-json=ImportPath,Imports,Deps,Standard", "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	pkgs := map[string]*goPackage{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		p := new(goPackage)
		if err := dec.Decode(p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list's output: %v", err)
		}
		pkgs[p.ImportPath] = p
	}
	if len(pkgs) < 20 || pkgs["marsfs/tensor"] == nil {
		t.Fatalf("go list found %d packages, not marsfs's", len(pkgs))
	}
	return pkgs
}

func TestLayers(t *testing.T) {
	pkgs := listPackages(t)
	// reaches fails for each package of from that reaches (imports,
	// directly or not) one of group.
	reaches := func(from, group []string, why string) {
		for _, p := range pkgs {
			if !in(p.ImportPath, from) {
				continue
			}
			for _, d := range p.Deps {
				if in(d, group) {
					t.Errorf("%s reaches %s: %s", p.ImportPath, d, why)
				}
			}
		}
	}
	reaches(planning, kernels, "planning and kernels stand side by side")
	reaches(kernels, planning, "planning and kernels stand side by side")
	reaches(codecs, append(slices.Clone(planning), kernels...), "the codecs are under planning and kernels")
	reaches(planners, language, "planning reads graphs (tensor/spec), not the spec language")
	reaches([]string{"marsfs/tensor"}, above, "the tensor tree is under exec, fs, cluster and shm")

	// only allows from's packages to reach no marsfs package but those of
	// allowed, and no third-party module.
	only := func(from string, allowed []string, why string) {
		p := pkgs[from]
		if p == nil {
			t.Errorf("go list does not list %s", from)
			return
		}
		modules := map[string]bool{}
		for _, d := range p.Deps {
			switch {
			case strings.HasPrefix(d, "marsfs/") && !slices.Contains(allowed, d):
				t.Errorf("%s reaches %s: %s", from, d, why)
			case thirdParty(d):
				modules[module(d)] = true
			}
		}
		for _, m := range slices.Sorted(maps.Keys(modules)) {
			t.Errorf("%s reaches the module %s: %s", from, m, why)
		}
	}
	only("marsfs/tensor", nil, "tensor is the vocabulary every layer shares")
	only("marsfs/tensor/chunk", []string{"marsfs/tensor"}, "the chunk-op contract links no codec, planner or kernel")
	core := []string{"marsfs/tensor", "marsfs/tensor/chunk", "marsfs/exec/plan"}
	only("marsfs/exec/plan", core, "the pure cores link no kernel, no codec and no module outside the standard library")
	only("marsfs/exec/core", core, "the pure cores link no kernel, no codec and no module outside the standard library")

	// The pure cores and what they reach of marsfs import no package that
	// does I/O.
	for _, c := range cores {
		for _, path := range append([]string{c}, pkgs[c].Deps...) {
			p := pkgs[path]
			if p == nil || !strings.HasPrefix(path, "marsfs/") {
				continue
			}
			for _, imp := range p.Imports {
				if in(imp, io_) {
					t.Errorf("%s, which %s reaches, imports %s: the pure cores do no I/O", path, c, imp)
				}
			}
		}
	}
}
