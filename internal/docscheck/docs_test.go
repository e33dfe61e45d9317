// Package docscheck holds the test that every exported name of the
// module's public packages is documented, as go doc shows it.
package docscheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// public are the packages a program imports.
var public = []string{"event", "eventkind", "eventref", "refcount", "reactor", "uv", "async", "loop"}

// TestExportedNamesDocumented fails for each exported function, method,
// type, struct field, constant or variable of a public package that has
// neither a doc comment nor a line comment (a constant or variable in a
// documented group counts as documented, as go doc shows the group's
// comment).
func TestExportedNamesDocumented(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, pkg := range public {
		dir := filepath.Join(root, pkg)
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", dir, err)
		}
		fset := token.NewFileSet()
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			src, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			for _, miss := range undocumented(f) {
				t.Errorf("%s: %s has no doc comment", fset.Position(miss.pos), miss.name)
			}
		}
	}
}

type missing struct {
	name string
	pos  token.Pos
}

// undocumented lists the exported names of f without documentation.
func undocumented(f *ast.File) []missing {
	var out []missing
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || d.Doc != nil {
				continue
			}
			if d.Recv != nil && !exportedRecv(d.Recv) {
				continue
			}
			out = append(out, missing{d.Name.Name, d.Pos()})
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					if d.Doc == nil && s.Doc == nil && s.Comment == nil {
						out = append(out, missing{s.Name.Name, s.Pos()})
					}
					if st, ok := s.Type.(*ast.StructType); ok {
						out = append(out, undocumentedFields(s.Name.Name, st)...)
					}
				case *ast.ValueSpec:
					if d.Doc != nil || s.Doc != nil || s.Comment != nil {
						continue
					}
					for _, n := range s.Names {
						if n.IsExported() {
							out = append(out, missing{n.Name, n.Pos()})
						}
					}
				}
			}
		}
	}
	return out
}

// undocumentedFields lists the exported, named fields of a struct with
// neither a doc comment nor a line comment.
func undocumentedFields(typ string, st *ast.StructType) []missing {
	var out []missing
	for _, fl := range st.Fields.List {
		if fl.Doc != nil || fl.Comment != nil {
			continue
		}
		for _, n := range fl.Names {
			if n.IsExported() {
				out = append(out, missing{typ + "." + n.Name, n.Pos()})
			}
		}
	}
	return out
}

// exportedRecv reports whether a method's receiver type is exported.
func exportedRecv(fl *ast.FieldList) bool {
	if len(fl.List) == 0 {
		return false
	}
	t := fl.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.IsExported()
		default:
			return false
		}
	}
}
