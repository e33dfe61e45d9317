#!/bin/sh
# twins.sh runs each example's own test against its standard-library twin:
# std.go becomes main.go of a scratch module (outside this one, so fsnotify
# never enters go.mod), the test is copied with its -driver arguments taken
# out, and go vet and go test run there. Run from the repository's root:
# `make example-twins`, or sh examples/twins.sh [go test flags]. It fetches
# github.com/fsnotify/fsnotify (the version pinned below) through the Go
# module proxy the first time.
set -e
fsnotify=v1.10.1
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for d in examples/*/; do
	name=$(basename "$d")
	[ -f "$d/std.go" ] || continue
	m="$tmp/$name"
	mkdir -p "$m"
	sed '1,/^$/d' "$d/std.go" >"$m/main.go" # without its //go:build ignore
	sed -e 's/, "-driver", driver//' -e 's/"-driver", driver//' -e 's/"-driver", d, //' \
		"$d/main_test.go" >"$m/main_test.go"
	cat >"$m/go.mod" <<EOM
module twin/$name

go 1.24

require (
	github.com/uvevent/uvevent v0.0.0
	github.com/fsnotify/fsnotify $fsnotify
)
replace github.com/uvevent/uvevent => $root
EOM
	(cd "$m" && go mod tidy >/dev/null && go vet . && go test -count=1 "$@" .)
done
