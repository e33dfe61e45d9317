package uvcgo

/*
#include "uvev.h"
void uvev_loop_close_all(uvev_loop *l);
*/
import "C"

// Abandon frees the loop of a reactor that was dropped without Close: it
// closes every handle left, waits in libuv for their close callbacks and
// for the requests in flight (their completions are dropped: nobody waits
// for them any more), and frees the loop. Call it only when nothing else
// can reach the loop.
func (l *Loop) Abandon() error {
	if l.p == nil {
		return nil
	}
	l.closeAll()
	return l.Close()
}

// closeAll is Abandon before the loop is freed: every handle closed and its
// close callback run, every request done.
func (l *Loop) closeAll() {
	C.uvev_loop_close_all(l.mut())
	l.Shutdown()
	for l.Handles() > 0 || l.Requests() > 0 {
		l.TurnBlocking()
	}
}
