# uvevent — the two commands a new user runs are `make setup demo` and `make test`.
GO      ?= go
PKGS    ?= ./...
BIN     := bin

# staticcheck, pinned; `make setup` installs it with go install when missing
# (v0.8.2 is built with Go 1.26: an older go fetches that toolchain itself).
STATICCHECK_VERSION := v0.8.2
STATICCHECK         := $(shell $(GO) env GOPATH)/bin/staticcheck

.PHONY: setup test race asan cgocheck bench demo lint fuzz static-check stress clean

## setup: install libuv1-dev and pkg-config with apt-get, and staticcheck with
## go install, each only when missing
setup:
	@./scripts/setup.sh
	@if $(STATICCHECK) -version 2>/dev/null | grep -q '($(STATICCHECK_VERSION:v%=%))'; then \
	  echo "setup: staticcheck $(STATICCHECK_VERSION) is present; nothing to install"; \
	else \
	  echo "setup: installing staticcheck $(STATICCHECK_VERSION) with go install"; \
	  $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION); \
	fi

## test: vet (with and without cgo), the whole suite with cgo pointer checks on
## (libuv driver), the whole suite again built without cgo (pure-Go driver),
## and the static-link check
test: lint static-check
	GODEBUG=cgocheck=1 $(GO) test -count=1 $(PKGS)
	CGO_ENABLED=0 $(GO) vet $(PKGS)
	CGO_ENABLED=0 $(GO) test -count=1 $(PKGS)

## race: the suite under the race detector
race:
	$(GO) test -race -count=1 $(PKGS)

## asan: the C shim and the tests under AddressSanitizer
asan:
	CGO_CFLAGS="-g -O1 -fsanitize=address -fno-omit-frame-pointer" \
	CGO_LDFLAGS="-fsanitize=address" \
	$(GO) test -asan -count=1 $(PKGS)

## stress: the signal storm and uv.Process beside os/exec, 20 times each (about a minute)
stress:
	$(GO) test -count=20 -run '^(TestSignalStorm|TestProcessBesideOsExec)$$' ./uv/

## cgocheck: the cgo packages under the strict pointer checks (cgocheck2)
cgocheck:
	GOEXPERIMENT=cgocheck2 $(GO) test -count=1 ./internal/cgo/ ./reactor/ ./uv/

## bench: our figures beside the comparators (raw C libuv, Go std), as ratios
# benchtable runs the comparators it lists itself, then one NAME=command per
# program of ours below; {go:NAME} builds ./bench/cmd/NAME, {c:NAME}
# bench/c/NAME.c.
bench:
	$(GO) run ./bench/cmd/benchtable -out docs/benchmarks-latest.md \
	  -gobench 'C1|X1|K1' -gopkgs './event/ ./reactor/' \
	  't1-uvevent={go:t1} -n 1000000' \
	  't1-uvevent-go={go:t1} -n 1000000 -driver go' \
	  'x1-uvevent={go:x1}' \
	  'x1-uvevent-go={go:x1} -driver go' \
	  'm1-uvevent={go:m1}' \
	  'e1-uvevent={go:e1load} -impl uvevent {go:e1uv}' \
	  'e1-uvevent-conn={go:e1load} -impl uvevent-conn {go:e1uv} -conn' \
	  'e1-uvevent-go={go:e1load} -impl uvevent-go {go:e1uv} -driver go' \
	  's1-uvevent={go:s1}' \
	  'd1-uvevent={go:d1uv}' \
	  'd1-uvevent-go={go:d1uv} -driver go' \
	  'l1-uvevent={go:l1}' \
	  'l1-uvevent-go={go:l1} -driver go'

## demo: the tour: the model, the loop interface (echo server, timers, signal), a process and a file watch, the deadlock report, Stats
demo:
	$(GO) run ./cmd/demo

## lint: gofmt, go vet and staticcheck (installed by `make setup`)
lint:
	@out=$$(gofmt -l .); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	@test -x $(STATICCHECK) || { echo "lint: $(STATICCHECK) is missing: run make setup"; exit 1; }
	$(STATICCHECK) $(PKGS)

## fuzz: the callbacks-vector fuzz target for a while
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzVector -fuzztime 30s ./event/

## static-check: a program built with uvevent does not need libuv.so
static-check:
	$(GO) build -o $(BIN)/demo ./cmd/demo
	@if ldd $(BIN)/demo | grep -q libuv; then echo "static-check: $(BIN)/demo links libuv dynamically"; ldd $(BIN)/demo; exit 1; fi
	@echo "static-check: libuv is linked statically ($(BIN)/demo needs no libuv.so)"

clean:
	rm -rf $(BIN)
