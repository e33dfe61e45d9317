package conform

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"log/slog"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/uvevent/uvevent/reactor"
)

// NilInputs describes a package's exported API for CheckNilInputs: every
// exported function and every exported type with methods, so that each is
// called with nil and zero input.
type NilInputs struct {
	// Dir is the package's source directory (a test's own is ".").
	Dir string
	// Funcs are the package's exported functions by name, generic ones
	// instantiated (event.NewFuture[int]).
	Funcs map[string]any
	// Types are typed nil pointers, one per exported type with methods:
	// (*reactor.Timer)(nil), naming the type only. Each method is called on
	// a pointer to the type's zero value (a method with a value receiver on
	// the zero value itself), never on a nil receiver.
	Types []any
	// Refusals are the errors a refusal may match (errors.Is).
	Refusals []error
	// MaySucceed names calls ("Func", "Type.Method", "zero Type.Method")
	// whose error result is not a refusal (a nil error is right, or an
	// error that says something else, as Unwrap's), each with the reason.
	MaySucceed map[string]string
	// Skip names functions and types left out of the walk, each with the
	// reason.
	Skip map[string]string
}

// nilCallBound bounds one call: a call that has not returned by then hangs,
// and fails the walk rather than hang it.
const nilCallBound = 10 * time.Second

// CheckNilInputs calls every function of in.Funcs with the zero value of
// each parameter (nil pointers, functions, interfaces and contexts, empty
// strings, zero numbers; one zero element for a variadic parameter), and
// every exported method of each type in in.Types (promoted ones included)
// on its zero value, the same way. Each call must return without panicking and,
// if its last result is an error, with an error matching one of
// in.Refusals (unless in.MaySucceed names it). It first checks, from the
// package's source, that every exported function and type with methods is
// listed or skipped.
func CheckNilInputs(t *testing.T, in NilInputs) {
	t.Helper()
	// Report(nil, "", nil) and its kin log to slog's default logger: keep
	// the walk's output to what fails.
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.DiscardHandler))
	funcs, declared := exportedAPI(t, in.Dir)
	listed := map[string]bool{}
	for _, v := range in.Types {
		listed[typeName(reflect.TypeOf(v))] = true
	}
	for _, f := range funcs {
		if _, ok := in.Funcs[f]; !ok && in.Skip[f] == "" {
			t.Errorf("exported function %s is neither in Funcs nor skipped", f)
		}
	}
	for ty := range declared {
		if !listed[ty] && in.Skip[ty] == "" {
			t.Errorf("exported type %s has methods but is neither in Types nor skipped", ty)
		}
	}
	names := make([]string, 0, len(in.Funcs))
	for name := range in.Funcs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		checkZeroCall(t, in, name, reflect.ValueOf(in.Funcs[name]))
	}
	for _, v := range in.Types {
		pt := reflect.TypeOf(v)
		if pt.Kind() != reflect.Pointer {
			t.Errorf("Types: %v is not a pointer", pt)
			continue
		}
		et, tn := pt.Elem(), typeName(pt)
		for i := range pt.NumMethod() {
			m := pt.Method(i)
			if _, byValue := et.MethodByName(m.Name); byValue {
				checkZeroCall(t, in, "zero "+tn+"."+m.Name, reflect.Zero(et).MethodByName(m.Name))
				continue
			}
			// Every method, the promoted ones too, on a pointer to the
			// zero value. A nil pointer is not called: a nil receiver may
			// panic, as the standard library's do.
			checkZeroCall(t, in, "zero "+tn+"."+m.Name, reflect.New(et).Method(i))
		}
	}
}

// typeName is the name of the type a pointer points to.
func typeName(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	name := t.Name()
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i] // a generic type's instance: Future[int]
	}
	return name
}

// checkZeroCall makes one call of the walk and checks what it did.
func checkZeroCall(t *testing.T, in NilInputs, name string, fn reflect.Value) {
	t.Helper()
	ft := fn.Type()
	out, p, ok := callBounded(fn, zeroArgs(ft))
	if !ok {
		t.Errorf("%s with nil and zero input did not return within %v", name, nilCallBound)
		return
	}
	if p != nil {
		t.Errorf("%s with nil and zero input panicked: %v", name, p)
		return
	}
	defer func() {
		if p := closeResults(out); p != nil {
			t.Errorf("%s with nil and zero input: closing what it returned panicked: %v", name, p)
		}
	}()
	n := ft.NumOut()
	if n == 0 || ft.Out(n-1) != reflect.TypeFor[error]() {
		return
	}
	err, _ := out[n-1].Interface().(error)
	if in.MaySucceed[name] != "" {
		return
	}
	if err == nil {
		t.Errorf("%s with nil and zero input returned a nil error", name)
		return
	}
	for _, want := range in.Refusals {
		if errors.Is(err, want) {
			return
		}
	}
	t.Errorf("%s with nil and zero input = %v, matching none of %v", name, err, in.Refusals)
}

// CheckNilArgs calls every function of funcs, but those skip names (each
// with its reason), with r for each *reactor.Reactor parameter and the zero
// value of every other (as CheckNilInputs does): a live reactor given nil
// and zero arguments. Each call must return without panicking, and a call
// that reports no error must not return a nil pointer (an empty success).
// What a call makes is closed.
func CheckNilArgs(t *testing.T, r *reactor.Reactor, funcs map[string]any, skip map[string]string) {
	t.Helper()
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.DiscardHandler))
	names := make([]string, 0, len(funcs))
	for name := range funcs {
		if skip[name] == "" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	rt := reflect.TypeFor[*reactor.Reactor]()
	for _, name := range names {
		fn := reflect.ValueOf(funcs[name])
		ft := fn.Type()
		args := zeroArgs(ft)
		for i := range args {
			if ft.In(i) == rt {
				args[i] = reflect.ValueOf(r)
			}
		}
		out, p, ok := callBounded(fn, args)
		switch {
		case !ok:
			t.Errorf("%s on a live reactor with nil and zero arguments did not return within %v", name, nilCallBound)
			continue
		case p != nil:
			t.Errorf("%s on a live reactor with nil and zero arguments panicked: %v", name, p)
			continue
		}
		if p := closeResults(out); p != nil {
			t.Errorf("%s on a live reactor with nil and zero arguments: closing what it returned panicked: %v", name, p)
		}
		if n := ft.NumOut(); n > 0 && ft.Out(n-1) == reflect.TypeFor[error]() && out[n-1].IsNil() {
			for i, v := range out[:n-1] {
				if v.Kind() == reflect.Pointer && v.IsNil() {
					t.Errorf("%s on a live reactor with nil and zero arguments: result %d is nil, and no error", name, i)
				}
			}
		}
	}
}

// zeroArgs returns the zero value of each parameter of ft, one zero element
// for a variadic one.
func zeroArgs(ft reflect.Type) []reflect.Value {
	args := make([]reflect.Value, ft.NumIn())
	for i := range args {
		pt := ft.In(i)
		if ft.IsVariadic() && i == ft.NumIn()-1 {
			args[i] = reflect.MakeSlice(pt, 1, 1)
			continue
		}
		args[i] = reflect.Zero(pt)
	}
	return args
}

// callBounded calls fn with args in a goroutine: its results, or what it
// panicked with; ok is false when it did not return within nilCallBound.
func callBounded(fn reflect.Value, args []reflect.Value) (out []reflect.Value, panicked any, ok bool) {
	type result struct {
		out   []reflect.Value
		panic any
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			if p := recover(); p != nil {
				r.panic = p
			}
			done <- r
		}()
		if fn.Type().IsVariadic() {
			r.out = fn.CallSlice(args)
		} else {
			r.out = fn.Call(args)
		}
	}()
	select {
	case r := <-done:
		return r.out, r.panic, true
	case <-time.After(nilCallBound):
		return nil, nil, false
	}
}

// closeResults closes whatever a call made (a reactor, an event),
// returning a panic of a Close.
func closeResults(out []reflect.Value) (panicked any) {
	defer func() { panicked = recover() }()
	for _, v := range out {
		if !v.IsValid() || !v.CanInterface() {
			continue
		}
		if (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) && v.IsNil() {
			continue
		}
		switch c := v.Interface().(type) {
		case interface{ Close() error }:
			_ = c.Close()
		case interface{ Close(context.Context) error }:
			_ = c.Close(context.Background())
		case interface{ Close() }:
			c.Close()
		}
	}
	return nil
}

// exportedAPI lists, from the Go files of dir that this build compiles
// (tests excluded), the exported functions, and the exported methods each
// exported type declares.
func exportedAPI(t *testing.T, dir string) (funcs []string, declared map[string]map[string]bool) {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool {
		if strings.HasSuffix(fi.Name(), "_test.go") {
			return false
		}
		ok, err := build.Default.MatchFile(dir, fi.Name())
		return err == nil && ok
	}, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", dir, err)
	}
	declared = map[string]map[string]bool{}
	for _, pkg := range pkgs {
		for _, file := range pkg.Files {
			for _, d := range file.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || !fd.Name.IsExported() {
					continue
				}
				if fd.Recv == nil {
					funcs = append(funcs, fd.Name.Name)
					continue
				}
				if rt := recvName(fd.Recv.List[0].Type); ast.IsExported(rt) {
					if declared[rt] == nil {
						declared[rt] = map[string]bool{}
					}
					declared[rt][fd.Name.Name] = true
				}
			}
		}
	}
	sort.Strings(funcs)
	return funcs, declared
}

// recvName is the name of a method's receiver type.
func recvName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			panic(fmt.Sprintf("receiver type %T", e))
		}
	}
}
