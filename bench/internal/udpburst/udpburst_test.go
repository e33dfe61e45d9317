package udpburst

import (
	"errors"
	"net"
	"os/exec"
	"path/filepath"
	"testing"
)

// buildSender compiles bench/c/u1_send.c into the test's directory.
func buildSender(t *testing.T) string {
	t.Helper()
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc to build bench/c/u1_send.c:", err)
	}
	path := filepath.Join(t.TempDir(), "u1_send")
	if out, err := exec.Command(cc, "-O2", "-o", path, filepath.Join("..", "..", "c", "u1_send.c")).CombinedOutput(); err != nil {
		t.Fatalf("build u1_send: %v\n%s", err, out)
	}
	return path
}

func TestCheckWantsSender(t *testing.T) {
	f := &Flags{N: 10, Size: 64}
	if err := f.Check(); !errors.Is(err, ErrNoSender) {
		t.Fatalf("Check without -sender: %v, want ErrNoSender", err)
	}
	f.Sender = "u1_send"
	if err := f.Check(); err != nil {
		t.Fatalf("Check: %v", err)
	}
}

// TestBurstCountsWhatTheSenderSent runs the common sender at a receiver
// whose socket buffer holds the whole small burst: every datagram arrives,
// of the size asked for, and Burst returns after the sender's exit.
func TestBurstCountsWhatTheSenderSent(t *testing.T) {
	f := &Flags{N: 50, Size: 100, Sender: buildSender(t)}
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	var c Counter
	sizes := make(chan int, f.N+1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 2048)
		for {
			n, _, err := conn.ReadFromUDP(buf)
			if err != nil {
				return
			}
			sizes <- n
			c.Got()
		}
	}()
	err = Burst(f, conn.LocalAddr().(*net.UDPAddr), &c)
	conn.Close()
	<-done
	if err != nil {
		t.Fatalf("Burst: %v", err)
	}
	if got := c.n.Load(); got != int64(f.N) {
		t.Fatalf("received %d datagrams, want %d", got, f.N)
	}
	close(sizes)
	for n := range sizes {
		if n != f.Size {
			t.Fatalf("a datagram of %d bytes, want %d", n, f.Size)
		}
	}
}

// TestBurstReportsSenderFailure: a sender that cannot be run, or exits
// with a failure, is Burst's error.
func TestBurstReportsSenderFailure(t *testing.T) {
	to := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9}
	var c Counter
	if err := Burst(&Flags{N: 1, Size: 1, Sender: filepath.Join(t.TempDir(), "none")}, to, &c); err == nil {
		t.Fatal("Burst with a missing sender: no error")
	}
	var exit *exec.ExitError
	if err := Burst(&Flags{N: 1, Size: 5000, Sender: buildSender(t)}, to, &c); !errors.As(err, &exit) {
		t.Fatalf("Burst with a sender refusing its size: %v, want an *exec.ExitError", err)
	}
}
