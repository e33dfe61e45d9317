module github.com/uvevent/uvevent/bench/cmd/e1nbio

go 1.24

require (
	github.com/lesismal/nbio v1.6.8
	github.com/uvevent/uvevent v0.0.0
)

replace github.com/uvevent/uvevent => ../../..
