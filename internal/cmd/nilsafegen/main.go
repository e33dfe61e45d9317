// Command nilsafegen writes znilsafe.go for a package of the module: for
// every exported struct type of the package, and every exported method its
// pointer reaches only through an embedded field (event.Base's, Handle's),
// the same method declared on the type itself, with the promoted method's
// doc comment.
//
// Go's wrapper for a promoted method dereferences the receiver to reach the
// embedded field, so on a nil *IO or a nil *event.Future it panics before
// any code of the module runs. A declared method checks the receiver
// first: a nil one is handed to the method it would have reached, called on
// a nil receiver of the type that declares it ((*Handle)(nil).Stop(), whose
// nil policy is tested on its own), or, when that type cannot be named from
// the package or its method takes a value receiver, the method returns zero
// values and the sentinel error given by -sentinel.
//
// Run by `go generate` in each package (the package's doc.go carries the
// line); TestGeneratedFilesCurrent checks that every generated file is what
// the generator makes of today's sources.
package main

import (
	"flag"
	"log"
	"os"
)

func main() {
	dir := flag.String("dir", ".", "the package's directory")
	out := flag.String("o", "znilsafe.go", "the output file")
	sentinel := flag.String("sentinel", "github.com/uvevent/uvevent/event.ErrNilEvent",
		"the error a nil receiver gets when no declaring type can take it: import path, a dot, the name")
	flag.Parse()
	src, err := Generate(*dir, *sentinel)
	if err != nil {
		log.Fatal(err)
	}
	if src == nil {
		return // nothing to declare: no file
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		log.Fatal(err)
	}
}
