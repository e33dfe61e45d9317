package uv

import (
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
)

// manyClient dials manyConns connections to addr, sends a byte on each and
// reads its echo, says "ok", and holds them until its stdin closes. It is
// a process of its own, so that its descriptors do not count against the
// server's.
func manyClient(addr string) int {
	n, _ := strconv.Atoi(os.Getenv("UVT_MANY_N"))
	conns := make([]net.Conn, 0, n)
	for range n {
		c, err := net.Dial("tcp4", addr)
		if err != nil {
			fmt.Println("dial:", err)
			return 1
		}
		conns = append(conns, c)
	}
	b := []byte{0}
	for i, c := range conns {
		b[0] = byte(i)
		if _, err := c.Write(b); err != nil {
			fmt.Println("write:", err)
			return 1
		}
	}
	for i, c := range conns {
		if _, err := io.ReadFull(c, b); err != nil || b[0] != byte(i) {
			fmt.Println("echo:", b, err)
			return 1
		}
	}
	fmt.Println("ok")
	io.Copy(io.Discard, os.Stdin)
	return 0
}
