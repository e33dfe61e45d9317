// Package loadgen holds what the load generators (e1load, h1load, m2load)
// share around their workload: running it within a time budget and
// printing its result line, and waiting out a phase of the load.
package loadgen

import (
	"context"
	"fmt"
	"os"
	"time"
)

// Main runs run with a context that ends after budget and prints the
// result line it returns on stdout; an error goes to stderr, prefixed
// with name, and the process exits with status 1.
func Main(name string, budget time.Duration, run func(ctx context.Context) (string, error)) {
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	line, err := run(ctx)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
	fmt.Println(line)
}

// Sleep waits for d, returning early with the first error failed gives
// (a connection or worker that failed) or ctx's when it ends first.
func Sleep(ctx context.Context, d time.Duration, failed <-chan error) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case err := <-failed:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
