package uv_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// A file written, then read back with a request event, on the pure-Go
// driver (the one a build without cgo gets): the same calls and results
// as on libuv's (see ExampleOpenFile).
func ExampleFile_ReadAsync() {
	r, err := reactor.New(reactor.Options{Driver: reactor.DriverGo})
	if err != nil {
		panic(err)
	}
	go r.Serve(context.Background())
	defer r.Close() // stops Serve and waits for it
	dir, _ := os.MkdirTemp("", "uvevent")
	defer os.RemoveAll(dir)
	f, err := uv.OpenFile(context.Background(), r, filepath.Join(dir, "note"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		panic(err)
	}
	f.Write([]byte("written through a File"))
	q, _ := f.ReadAsync(context.Background(), 7, 0) // a *uv.FSRequest[[]byte]
	b, err := q.Await(context.Background())
	fmt.Printf("%q %v\n", b, err)
	fmt.Println(q.Info() == "FS(read "+f.Name()+")")
	f.Close()
	// Output:
	// "written" <nil>
	// true
}

// The file system requests, on either driver: each returns an
// *uv.FSRequest typed by its result, awaited here off the loop (on the
// loop, subscribe with OnDone). Errors are *fs.PathError values that
// match fs.ErrNotExist and friends, as package os's.
func ExampleStat() {
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		panic(err)
	}
	go r.Serve(context.Background())
	defer r.Close()
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "uvevent")
	defer os.RemoveAll(dir)

	mk, _ := uv.Mkdir(ctx, r, filepath.Join(dir, "logs"), 0o755)
	_, err = mk.Await(ctx)
	fmt.Println("mkdir:", err)
	os.WriteFile(filepath.Join(dir, "logs", "app.log"), []byte("started\n"), 0o644)

	st, _ := uv.Stat(ctx, r, filepath.Join(dir, "logs", "app.log"))
	fi, _ := st.Await(ctx)
	fmt.Println(fi.Name(), fi.Size(), fi.Mode().IsRegular())

	mv, _ := uv.RenameFile(ctx, r, filepath.Join(dir, "logs", "app.log"), filepath.Join(dir, "logs", "app.log.1"))
	mv.Await(ctx)
	ls, _ := uv.ReadDir(ctx, r, filepath.Join(dir, "logs"))
	ents, _ := ls.Await(ctx)
	for _, e := range ents {
		fmt.Println(e.Name(), e.IsDir())
	}

	st, _ = uv.Stat(ctx, r, filepath.Join(dir, "logs", "app.log"))
	_, err = st.Await(ctx)
	fmt.Println(errors.Is(err, fs.ErrNotExist), err.(*fs.PathError).Op)
	// Output:
	// mkdir: <nil>
	// app.log 8 true
	// app.log.1 false
	// true stat
}

// A File's own requests, on its descriptor: its stat, a truncation, a
// sync, each an *uv.FSRequest; Stat, Truncate and Sync wait for them as
// *os.File's methods do.
func ExampleFile_StatAsync() {
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		panic(err)
	}
	go r.Serve(context.Background())
	defer r.Close()
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "uvevent")
	defer os.RemoveAll(dir)

	open, _ := uv.OpenAsync(ctx, r, filepath.Join(dir, "data"), os.O_RDWR|os.O_CREATE, 0o600)
	f, err := open.Await(ctx)
	if err != nil {
		panic(err)
	}
	f.Write([]byte("0123456789"))
	tr, _ := f.TruncateAsync(ctx, 4)
	tr.Await(ctx)
	sync, _ := f.SyncAsync(ctx)
	_, err = sync.Await(ctx)
	st, _ := f.StatAsync(ctx)
	fi, _ := st.Await(ctx)
	fmt.Println(fi.Name(), fi.Size(), fi.Mode(), err)
	f.Close()
	// Output:
	// data 4 -rw------- <nil>
}

// A file opened, read and closed in callbacks on the loop goroutine, with
// no goroutine waiting: Close there starts the close and returns at once
// (CloseAsync gives the close as a request, here subscribed to), and Run
// returns once the close is done.
func ExampleFile_CloseAsync() {
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		panic(err)
	}
	defer r.Close()
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "uvevent")
	defer os.RemoveAll(dir)
	name := filepath.Join(dir, "note")
	os.WriteFile(name, []byte("hello from a callback"), 0o600)

	open, _ := uv.OpenAsync(ctx, r, name, os.O_RDONLY, 0)
	open.OnDone(func(f *uv.File, err error) {
		read, _ := f.ReadAsync(ctx, 5, 0)
		read.OnDone(func(b []byte, err error) {
			fmt.Printf("read %q %v\n", b, err)
			closing, err := f.CloseAsync(ctx)
			fmt.Println("CloseAsync:", err)
			closing.OnDone(func(_ struct{}, err error) { fmt.Println("closed:", err) })
			_, err = f.ReadAsync(ctx, 5, 0)
			fmt.Println("closed already for its user:", errors.Is(err, os.ErrClosed))
		})
	})
	fmt.Println("Run:", r.Run(ctx))
	// Output:
	// read "hello" <nil>
	// CloseAsync: <nil>
	// closed already for its user: true
	// closed: <nil>
	// Run: <nil>
}
