package reactor

import (
	"expvar"
	"fmt"
	"sync"
	"syscall"
)

// publishMu orders this package's Publish calls, so that two of them
// cannot both find a name free.
var publishMu sync.Mutex

// Publish makes r's Stats readable through expvar under name: the JSON
// object of the Stats fields, read afresh at each request of /debug/vars
// (or expvar.Get(name).String()), also after Close, which leaves the
// figures of the last turn. expvar keeps a name for the life of the
// process: a name already taken is refused with an error matching
// syscall.EEXIST (and fs.ErrExist), where expvar.Publish would panic; an
// empty name with one matching syscall.EINVAL.
func (r *Reactor) Publish(name string) (err error) {
	if err := r.usable(); err != nil {
		return err
	}
	if name == "" {
		return fmt.Errorf("reactor: Publish(%q): %w", name, syscall.EINVAL)
	}
	publishMu.Lock()
	defer publishMu.Unlock()
	if expvar.Get(name) != nil {
		return fmt.Errorf("reactor: Publish(%q): the name is taken: %w", name, syscall.EEXIST)
	}
	defer func() { // published by another package in between
		if recover() != nil {
			err = fmt.Errorf("reactor: Publish(%q): the name is taken: %w", name, syscall.EEXIST)
		}
	}()
	expvar.Publish(name, expvar.Func(func() any { return r.Stats() }))
	return nil
}
