package uv_test

import (
	"context"
	"fmt"
	"net"

	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// serving runs r's loop on a goroutine until the returned function stops
// it (a Stop before the loop runs ends its first turn) and closes r.
func serving(r *reactor.Reactor) (done func()) {
	served := make(chan error, 1)
	go func() { served <- r.Serve(context.Background()) }()
	return func() {
		r.Stop()
		<-served
		r.Close()
	}
}

// A datagram and its answer, with the addresses they came from. It runs
// on the build's driver: libuv with cgo, the pure-Go one without.
func ExampleListenUDP() {
	r, _ := reactor.New(reactor.Options{})
	defer serving(r)()
	a, _ := uv.ListenUDP(r, "udp4", "127.0.0.1:0")
	b, _ := uv.ListenUDP(r, "udp4", "127.0.0.1:0")
	a.WriteTo([]byte("ping"), b.LocalAddr())
	buf := make([]byte, 64)
	n, from, _ := b.ReadFrom(buf)
	fmt.Println(string(buf[:n]), from.String() == a.LocalAddr().String())
	b.WriteTo([]byte("pong"), from)
	n, _, _ = a.ReadFrom(buf)
	fmt.Println(string(buf[:n]))
	a.Close()
	b.Close()
	// Output:
	// ping true
	// pong
}

// A multicast receiver and sender: the receiver, bound to every address,
// joins a group on an interface (for one source only with
// JoinSourceSpecificGroup); the sender picks the interface its multicast
// goes out of, and how far it goes (SetMulticastTTL). Once joined, the
// receiver's callbacks or ReadFrom get what is sent to the group and its
// port, read in batches as every UDP's datagrams are.
func ExampleUDP_JoinGroup() {
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		panic(err)
	}
	defer r.Close()
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		panic(err)
	}
	group := net.ParseIP("239.1.2.3")

	recv, err := uv.ListenUDP(r, "udp4", "0.0.0.0:0")
	if err != nil {
		panic(err)
	}
	defer recv.Close()
	fmt.Println("join:", recv.JoinGroup(lo, group))

	send, err := uv.ListenUDP(r, "udp4", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer send.Close()
	fmt.Println("interface:", send.SetMulticastInterface(lo))
	fmt.Println("ttl:", send.SetMulticastTTL(1))
	fmt.Println("leave:", recv.LeaveGroup(lo, group))
	// Output:
	// join: <nil>
	// interface: <nil>
	// ttl: <nil>
	// leave: <nil>
}
