module github.com/uvevent/uvevent/nettest

go 1.26.0

require (
	github.com/uvevent/uvevent v0.0.0
	golang.org/x/net v0.62.0
)

require golang.org/x/sys v0.49.0 // indirect

replace github.com/uvevent/uvevent => ../
