//go:build !linux

package uv

import "syscall"

// No inotify descriptor and no poller exist off Linux (poller_go_other.go).
func inotifyChildWatches(*UvtReactor) int { return 0 }
func uvtPoller(*UvtReactor) *goPoller     { return nil }

// The Linux system calls of export_linux_test.go, each failing here with
// syscall.ENOSYS.

func UvtSocket(int, int, int) (int, error)     { return -1, syscall.ENOSYS }
func UvtPipe2([]int, int) error                { return syscall.ENOSYS }
func UvtEventfd(bool) (int, error)             { return -1, syscall.ENOSYS }
func UvtEpollCreate() (int, error)             { return -1, syscall.ENOSYS }
func UvtDup3(int, int) error                   { return syscall.ENOSYS }
func UvtTgkill(int, int, syscall.Signal) error { return syscall.ENOSYS }

// UvtReaperRunning: there is no reaper off Linux.
func UvtReaperRunning() bool { return false }

// UvtReaperFD: there is no reaper off Linux.
func UvtReaperFD() int { return -1 }
