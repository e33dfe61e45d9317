package event

import "syscall"

// closeFD closes the handle of an event with CloseFD.
func closeFD(fd int) { syscall.Close(syscall.Handle(fd)) }
