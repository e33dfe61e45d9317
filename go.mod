module github.com/uvevent/uvevent

go 1.24

require (
	github.com/google/go-cmp v0.7.0
	golang.org/x/sys v0.35.0
)
