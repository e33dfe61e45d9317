# uvevent — the two commands a new user runs are `make setup demo` and `make test`.
GO      ?= go
PKGS    ?= ./...
BIN     := bin

# staticcheck, pinned; `make setup` installs it with go install when missing
# (v0.8.2 is built with Go 1.26: an older go fetches that toolchain itself).
STATICCHECK_VERSION := v0.8.2
STATICCHECK         := $(shell $(GO) env GOPATH)/bin/staticcheck

.PHONY: setup test cross race nettest asan cgocheck bench demo example-lines example-twins lint fuzz fuzz-seeds static-check stress valgrind clean

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
	$(MAKE) cross

## cross: proves that the module compiles for other systems without cgo:
## Darwin and FreeBSD build and vet every package, test files included (the
## tests' Linux-only system calls are behind uv's export_linux_test.go and
## sysattr_linux_test.go); Windows builds the packages that need no Unix
## system. No test binaries run, one job at a time (-p 1): about a minute
## on a quiet 2-core machine.
CROSS_CORE := ./event/... ./eventkind/... ./eventref/... ./refcount/... ./reactor/...
cross:
	GOOS=darwin  CGO_ENABLED=0 $(GO) build -p 1 ./...
	GOOS=darwin  CGO_ENABLED=0 $(GO) vet -p 1 ./...
	GOOS=freebsd CGO_ENABLED=0 $(GO) build -p 1 ./...
	GOOS=freebsd CGO_ENABLED=0 $(GO) vet -p 1 ./...
	GOOS=windows CGO_ENABLED=0 $(GO) build -p 1 $(CROSS_CORE)

## race: the suite under the race detector (each package may take up to 20
## minutes, not go test's 10: the instrumented uv suite runs about 4 on a
## quiet 2-core machine and went past 10 at a load of 14)
race:
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

## nettest: x/net/nettest's net.Conn conformance suite over uv.IO, both drivers, with -race (a module of its own: nettest/)
nettest:
	cd nettest && $(GO) test -race -count=1 .

## asan: the C shim and the tests under AddressSanitizer
asan:
	CGO_CFLAGS="-g -O1 -fsanitize=address -fno-omit-frame-pointer" \
	CGO_LDFLAGS="-fsanitize=address" \
	$(GO) test -asan -count=1 -timeout 20m $(PKGS)

## stress: the stress tests (build tag stress; docs/reliability.md): G1 for
## every kind under GOGC=10, close racing firing under -race, many reactors
## at once, then the signal storm, uv.Process beside os/exec and a listener
## out of descriptors (TestListenerExhaustedPauses) repeated, on
## both drivers, and failures injected into the shim's libuv calls (tag
## uvfaults); about 2 minutes on 2 cores. STRESS_SHORT=1: under a minute.
STRESS_SHORT ?=
STRESS_COUNT := $(if $(filter 1,$(STRESS_SHORT)),2,10)
stress:
	$(GO) vet -tags stress ./uv/
	STRESS_SHORT=$(STRESS_SHORT) $(GO) test -tags stress -count=1 -timeout 15m -run '^TestStress(G1EveryKind|ManyReactors)$$' ./uv/
	STRESS_SHORT=$(STRESS_SHORT) $(GO) test -race -tags stress -count=1 -timeout 15m -run '^TestStress(CloseRacesFiring|UDPClosedInOwnCallback)$$' ./uv/
	$(GO) test -count=$(STRESS_COUNT) -timeout 15m -run '^(TestSignalStorm|TestProcessBesideOsExec|TestListenerExhaustedPauses)$$' ./uv/
	$(GO) test -tags uvfaults -count=1 -run '^(TestFaultInjectedLibuvCalls|TestListenerGoesOnAfterFailedAccept|TestIOCloseLingerTimerAndAbortInOneTurn)$$' ./uv/

## cgocheck: the cgo packages under the strict pointer checks (cgocheck2)
cgocheck:
	GOEXPERIMENT=cgocheck2 $(GO) test -count=1 ./internal/cgo/ ./reactor/ ./uv/

## bench: our figures beside the comparators (raw C libuv, Go std, gnet, nbio), as ratios, and the SVG plots in docs/
# benchtable runs the comparators it lists itself, then one NAME=command per
# program of ours below; {go:NAME} builds ./bench/cmd/NAME (inside it when it
# is a module of its own), {c:NAME} bench/c/NAME.c. A tagged workload
# (t1@1e4) is a table of its own. E1 runs in 5 shuffled rounds, with
# per-message counts (system calls from perf when it is installed: apt-get
# install linux-perf; else strace; else the table says why not) and its
# targets judged under its table; U1, H1 and H1C in 5 shuffled rounds too,
# their targets judged under their tables; K1, X1's round trip and X1's
# idle CPU judged on their benchmarks' alternating rounds
# (BenchmarkK1Alternating, BenchmarkX1Alternating, BenchmarkX1Idle). About
# 10 minutes on 2 cores.
bench:
	$(GO) run ./bench/cmd/benchtable -out docs/benchmarks-latest.md -svg docs \
	  -gobench 'C1|X1|K1|IOPingPong' -gopkgs './event/ ./reactor/ ./uv/' \
	  't1-uvevent={go:t1} -n 1000000' \
	  't1-uvevent-go={go:t1} -n 1000000 -driver go' \
	  't1@1e4-uvevent={go:t1} -n 10000' \
	  't1@1e4-uvevent-go={go:t1} -n 10000 -driver go' \
	  't1@1e5-uvevent={go:t1} -n 100000' \
	  't1@1e5-uvevent-go={go:t1} -n 100000 -driver go' \
	  'x1-uvevent={go:x1}' \
	  'x1-uvevent-go={go:x1} -driver go' \
	  'm1-uvevent={go:m1}' \
	  'e1-uvevent={go:e1load} -impl uvevent {go:e1uv}' \
	  'e1-uvevent-conn={go:e1load} -impl uvevent-conn {go:e1uv} -conn' \
	  'e1-uvevent-go={go:e1load} -impl uvevent-go {go:e1uv} -driver go' \
	  'e1-uvevent-go-conn={go:e1load} -impl uvevent-go-conn {go:e1uv} -conn -driver go' \
	  'e1@scale-uvevent-1r={go:e1load} -impl uvevent-1r -duration 2s {go:e1uv} -reactors 1' \
	  'e1@scale-uvevent-2r={go:e1load} -impl uvevent-2r -duration 2s {go:e1uv} -reactors 2' \
	  'e1@scale-uvevent-go-1r={go:e1load} -impl uvevent-go-1r -duration 2s {go:e1uv} -reactors 1 -driver go' \
	  'e1@scale-uvevent-go-2r={go:e1load} -impl uvevent-go-2r -duration 2s {go:e1uv} -reactors 2 -driver go' \
	  'h1-uvevent={go:h1load} -impl uvevent {go:h1serve} -uv' \
	  'h1-uvevent-go={go:h1load} -impl uvevent-go {go:h1serve} -uv -driver go' \
	  'h1c-uvevent={go:h1load} -impl uvevent -close -requests 10000 {go:h1serve} -uv' \
	  'h1c-uvevent-go={go:h1load} -impl uvevent-go -close -requests 10000 {go:h1serve} -uv -driver go' \
	  'm2-uvevent={go:m2load} -impl uvevent {go:e1uv}' \
	  'm2-uvevent-conn={go:m2load} -impl uvevent-conn {go:e1uv} -conn' \
	  'm2-uvevent-go={go:m2load} -impl uvevent-go {go:e1uv} -driver go' \
	  'm2-uvevent-go-conn={go:m2load} -impl uvevent-go-conn {go:e1uv} -conn -driver go' \
	  's1-uvevent={go:s1}' \
	  'd1-uvevent={go:d1uv}' \
	  'd1-uvevent-go={go:d1uv} -driver go' \
	  'l1-uvevent={go:l1}' \
	  'u1-uvevent={go:u1} -sender {c:u1_send}' \
	  'u1-uvevent-go={go:u1} -driver go -sender {c:u1_send}' \
	  'l1-uvevent-go={go:l1} -driver go'

## demo: the tour: the model, the loop interface (echo server, timers, signal), a process and a file watch, the deadlock report, Stats
demo:
	$(GO) run ./cmd/demo

## example-lines: the line counts of examples/README.md, each example beside
## its standard-library twin (non-blank, non-comment lines)
example-lines:
	@sh examples/lines.sh

## example-twins: each example's own test run against its standard-library
## twin, in a scratch module (fetches fsnotify through the module proxy)
example-twins:
	@sh examples/twins.sh

## lint: gofmt, go vet and staticcheck (installed by `make setup`)
lint:
	@out=$$(gofmt -l .); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	@test -x $(STATICCHECK) || { echo "lint: $(STATICCHECK) is missing: run make setup"; exit 1; }
	$(STATICCHECK) $(PKGS)

## fuzz: each fuzz target for FUZZTIME (default 30s), one after the other,
## on one worker: FUZZTIME=5m is the run of record (docs/reliability.md)
FUZZTIME ?= 30s
FUZZ_TARGETS := event:FuzzVector uv:FuzzReactorLifecycle uv:FuzzIO uv:FuzzPollProxyMask loop:FuzzLoop
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; name=$${t#*:}; echo "== $$name (./$$pkg, $(FUZZTIME))"; \
	  $(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 10s -parallel 1 ./$$pkg/; \
	done

## fuzz-seeds: every fuzz target on its seed corpus only (what CI runs)
fuzz-seeds:
	$(GO) test -count=1 -run '^Fuzz' ./event/ ./uv/ ./loop/

## valgrind: the C shim's own tests (internal/cgo/ctest, no Go) under memcheck;
## installs valgrind with apt-get only when it is missing
valgrind:
	@command -v valgrind >/dev/null || { sudo -n true 2>/dev/null && SUDO=sudo; $${SUDO:-} apt-get update -qq && $${SUDO:-} apt-get install -y -qq valgrind; }
	@mkdir -p $(BIN)
	cc -g -O0 -Wall -o $(BIN)/shimtest internal/cgo/*.c internal/cgo/ctest/*.c $$(pkg-config --cflags --libs libuv-static)
	valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite -q $(BIN)/shimtest

## static-check: a program built with uvevent does not need libuv.so
static-check:
	$(GO) build -o $(BIN)/demo ./cmd/demo
	@if ldd $(BIN)/demo | grep -q libuv; then echo "static-check: $(BIN)/demo links libuv dynamically"; ldd $(BIN)/demo; exit 1; fi
	@echo "static-check: libuv is linked statically ($(BIN)/demo needs no libuv.so)"

clean:
	rm -rf $(BIN)
