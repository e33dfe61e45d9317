// Package kinds is the generator's test input: kinds that promote methods
// through each path the generator knows.
package kinds

import "github.com/uvevent/uvevent/event"

// Ref promotes event.Base's methods, as a Go-owned kind does.
type Ref struct {
	event.Base
}

// Iface promotes the methods of an interface field: a nil *Iface has no
// declaring type to hand them to.
type Iface struct {
	event.Event
}

// Generic is a generic kind over a generic field, by pointer.
type Generic[T any] struct {
	*event.Future[T]
}

// Own declares its method: nothing promoted.
type Own struct{ n int }

// N returns n.
func (o *Own) N() int {
	if o == nil {
		return 0
	}
	return o.n
}
