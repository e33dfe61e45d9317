// Command nodeport is a Node.js program ported to Go with package loop: a
// heartbeat, a directory watch that runs a shell command on each change and
// streams its output, a time limit, and a SIGINT handler that stops it all.
// As in Node, the program ends when nothing is left to wait for.
//
//	go run ./examples/nodeport -dir . [-cmd 'ls | wc -l'] [-tick 1s] [-limit 1m] [-driver libuv|go]
//
// The original, watch.js (node watch.js DIR CMD TICK_MS LIMIT_MS):
//
//	const { spawn } = require('child_process');
//	const fs = require('fs');
//	const [dir = '.', cmd = 'ls | wc -l', tick = 1000, limit = 60000] = process.argv.slice(2);
//
//	let ticks = 0;
//	const heartbeat = setInterval(() => console.log(`tick ${++ticks}`), tick);
//	const watcher = fs.watch(dir, (type, name) => {
//	  console.log(`${type} ${name}`);
//	  const child = spawn('sh', ['-c', cmd], { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] });
//	  child.stdout.pipe(process.stdout);
//	  child.on('error', (err) => console.log(`${cmd}: ${err.message}`));
//	  child.on('exit', (code, signal) => console.log(`${cmd}: exit ${code ?? signal}`));
//	});
//	function stop() {
//	  clearInterval(heartbeat);
//	  clearTimeout(deadline);
//	  watcher.close();
//	  process.removeListener('SIGINT', stop);
//	  console.log('bye');
//	}
//	const deadline = setTimeout(stop, limit);
//	process.on('SIGINT', stop);
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/uvevent/uvevent/loop"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "nodeport:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	flags := flag.NewFlagSet("nodeport", flag.ContinueOnError)
	dir := flags.String("dir", ".", "the directory to watch")
	cmd := flags.String("cmd", "ls | wc -l", "the shell command to run on each change")
	tick := flags.Duration("tick", time.Second, "the heartbeat's interval")
	limit := flags.Duration("limit", time.Minute, "stop after this long")
	var driver reactor.Driver
	flags.Var(&driver, "driver", "the reactor's driver: libuv, go or auto")
	if err := flags.Parse(args); err != nil {
		return err
	}
	l, err := loop.New(loop.Options{ReactorOptions: reactor.Options{Driver: driver}})
	if err != nil {
		return err
	}
	defer l.Close()

	ticks := 0
	heartbeat, err := l.Repeat(*tick, func() {
		ticks++
		fmt.Fprintf(stdout, "tick %d\n", ticks)
	})
	if err != nil {
		return err
	}
	watcher, err := uv.NewFSEvent(l.Reactor(), *dir, uv.FSEventOptions{})
	if err != nil {
		return err
	}
	watcher.OnChange(func(ch uv.FSEventResult, _ error) {
		fmt.Fprintf(stdout, "%v %s\n", ch.Events, ch.Name)
		child, err := uv.StartProcess(l.Reactor(), uv.ProcessOptions{Args: []string{"sh", "-c", *cmd},
			Dir: *dir, Stdout: uv.StdioWriter(stdout), Stderr: uv.StdioInherit})
		if err != nil {
			fmt.Fprintf(stdout, "%s: %v\n", *cmd, err)
			return
		}
		child.OnExit(func(code int, _ error) { fmt.Fprintf(stdout, "%s: exit %d\n", *cmd, code) })
	})
	if err := watcher.Start(); err != nil {
		return err
	}
	var deadline loop.DelayID
	stop := func() {
		l.OffRepeat(heartbeat)
		l.OffDelay(deadline)
		watcher.Close()
		l.OffSignal(syscall.SIGINT)
		fmt.Fprintln(stdout, "bye")
	}
	if deadline, err = l.Delay(*limit, stop); err != nil {
		return err
	}
	if err := l.OnSignal(syscall.SIGINT, func(syscall.Signal) { stop() }, loop.SignalOptions{Unref: true}); err != nil {
		return err
	}
	return l.Run(ctx)
}
