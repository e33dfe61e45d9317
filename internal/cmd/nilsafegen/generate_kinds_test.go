package main

import (
	"go/ast"
	"go/parser"
	"go/types"
	"path/filepath"
	"strings"
	"testing"
)

// On a package with each path the generator knows, its output compiles
// with the package, hands a nil receiver to the declaring type when it can
// be named ((*event.Base)(nil), generic ones with their type arguments),
// returns the sentinel where it cannot (an interface field), carries the
// promoted method's doc, and declares nothing for a type without promoted
// methods.
func TestGenerateEachPath(t *testing.T) {
	dir := filepath.Join("testdata", "kinds")
	src, err := Generate(dir, "github.com/uvevent/uvevent/event.ErrNilEvent")
	if err != nil {
		t.Fatal(err)
	}
	out := string(src)
	for _, want := range []string{
		"func (r *Ref) Start() error {\n\tif r == nil {\n\t\treturn (*event.Base)(nil).Start()",
		"func (g *Generic[T]) Outcome() (T, bool, error) {",
		"It is [event.Base.Start], declared here for a nil receiver",
		"func (i *Iface) Start() error {\n\tif i == nil {\n\t\treturn event.ErrNilEvent\n\t}\n\treturn i.Event.Start()",
		"func (i *Iface) Info() string {\n\tif i == nil {\n\t\tvar r0 string\n\t\treturn r0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(out, "*Own)") {
		t.Errorf("output declares methods on Own, which promotes none")
	}
	if !strings.Contains(out, "(*event.Future[T])(nil).Outcome()") {
		t.Errorf("a generic field's method is not handed to its nil instance")
	}

	// The output compiles with the package.
	var files []*ast.File
	for _, name := range []string{filepath.Join(dir, "kinds.go")} {
		f, err := parser.ParseFile(shared.fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	gen, err := parser.ParseFile(shared.fset, "znilsafe.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	conf := types.Config{Importer: shared.importer}
	if _, err := conf.Check("kinds", shared.fset, append(files, gen), nil); err != nil {
		t.Errorf("the output does not compile with its package: %v\n%s", err, out)
	}
}
