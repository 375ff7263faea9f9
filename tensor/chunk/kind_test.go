package chunk

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"testing"
)

// TestKindsListsEveryConstant: every constant of type Kind declared in
// kind.go is named in fixedKinds, once, so that Kinds (which
// tensor/tensortest's TestKinds checks against the kernels and the
// tilers) lists it.
func TestKindsListsEveryConstant(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "kind.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var declared, listed []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, spec := range g.Specs {
			v, ok := spec.(*ast.ValueSpec)
			if !ok {
				continue
			}
			if id, ok := v.Type.(*ast.Ident); g.Tok == token.CONST && ok && id.Name == "Kind" {
				for _, name := range v.Names {
					declared = append(declared, name.Name)
				}
			}
			if g.Tok == token.VAR && len(v.Names) == 1 && v.Names[0].Name == "fixedKinds" {
				for _, e := range v.Values[0].(*ast.CompositeLit).Elts {
					listed = append(listed, e.(*ast.Ident).Name)
				}
			}
		}
	}
	slices.Sort(declared)
	slices.Sort(listed)
	if len(declared) < 70 || !slices.Equal(declared, listed) {
		t.Errorf("kind.go declares the kinds\n%v\nand fixedKinds lists\n%v", declared, listed)
	}
	if k := StepKind("sum", StepMap); k != "sum.map" {
		t.Errorf("StepKind(sum, map) = %s", k)
	}
	if op, s := Kind("cumsum.carry").Split(); op != "cumsum" || s != StepCarry {
		t.Errorf("Split(cumsum.carry) = %s, %s", op, s)
	}
}
