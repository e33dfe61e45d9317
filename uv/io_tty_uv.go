package uv

// The libuv driver's terminal: a uv_tty_t stream (internal/cgo/tty.c).

func (s *uvStream) setTTYMode(m TTYMode) error {
	if m != TTYNormal { // save what the terminal has now, if it is the first change
		if fd, err := s.loop.Fileno(s.h); err == nil {
			if cur, err := getTermios(fd); err == nil {
				saveTTY(fd, cur)
			}
		}
	}
	return s.loop.SetTTYMode(s.h, int(m))
}

// closing forgets a terminal's saved settings before its handle closes;
// a connection unopened in libuv, which has no handle to close, closes
// its socket here (closeUnopened).
func (s *uvStream) closing() {
	if s.transport == "tty" && s.h != 0 {
		if fd, err := s.loop.Fileno(s.h); err == nil {
			forgetTTY(fd)
		}
	}
	s.ioEvent.closing(s)
	if s.unopened() {
		s.closeUnopened()
	}
}

func (s *uvStream) ttyWinSize() (int, int, error) { return s.loop.TTYWinSize(s.h) }
