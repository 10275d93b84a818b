# sluice: `make run` runs it, `make test` runs every check CI runs.
GO ?= go
# bash, for pipefail in test.
SHELL := bash
GOFILES = $(shell find . -name '*.go' -not -path './node_modules/*')

.PHONY: run build test lint deadcode fuzz bench docs awscli jq chromium

run: ## run sluice with its embedded NATS server, data in ./sluice-data
	$(GO) run ./cmd/sluice serve

build:
	$(GO) build -o bin/ ./cmd/sluice ./cmd/sluice-agent

# The commands that tests run as processes are built once, before go test,
# rather than in each package's test binary (internal/buildtest). go test
# runs with -vet=off, here and in fuzz: lint has run go vet ./..., every
# analyzer on every package and its tests, a superset of the ten go test
# runs by default, which would vet every package again (54 s of CPU with
# an empty cache).
TEST_COMMANDS = ./cmd/sluice ./cmd/sluice-agent ./cmd/sluice-bench github.com/nats-io/nats-server/v2

test: node_modules awscli jq chromium ## formatting, vet, every test with -race (the ten slowest listed at the end), a short fuzz run; the time of each
	@set -o pipefail; t0=$$(date +%s); \
	$(MAKE) --no-print-directory lint && t1=$$(date +%s) && \
	bins="$$(mktemp -d)" && trap 'rm -rf "$$bins"' EXIT && \
	echo "building $(TEST_COMMANDS), and testing every package with -race" && \
	$(GO) build -o "$$bins/" $(TEST_COMMANDS) && \
	BUILDTEST_BINARIES="$$bins" $(GO) test -race -vet=off -timeout 20m -json ./... | $(GO) run ./internal/tools/slowtests && \
	t2=$$(date +%s) && $(MAKE) --no-print-directory fuzz && t3=$$(date +%s) && \
	echo "make test passed: lint $$((t1 - t0)) s, tests $$((t2 - t1)) s, fuzz $$((t3 - t2)) s; $$((t3 - t0)) s in all"

# kinesalite, the Kinesis emulator of the end-to-end tests, and the Node agent
# SDK of the edge's acceptance test (its native module comes prebuilt in a
# per-platform package), as package-lock.json pins them; reinstalled when the
# lock file changes. No install scripts: the only one (leveldown's) serves
# on-disk storage, and the tests run in memory.
node_modules: package-lock.json
	npm ci --no-audit --no-fund --ignore-scripts
	@touch node_modules

# apt_install,PACKAGE,TEST installs Debian's PACKAGE with apt-get, as root
# or with password-less sudo, for TEST; when it cannot, it says so and the
# build goes on: TEST then skips, saying why.
define apt_install
if ! command -v apt-get >/dev/null 2>&1; then echo "$(1): not found, and no apt-get to install it: $(2) will skip"; exit 0; fi; \
sudo=""; if [ "$$(id -u)" != 0 ]; then sudo="sudo -n"; fi; \
echo "$(1): installing Debian's $(1) for $(2)"; \
$$sudo apt-get install -y --no-install-recommends $(1) \
	|| { $$sudo apt-get update && $$sudo apt-get install -y --no-install-recommends $(1); } \
	|| echo "$(1): could not install Debian's $(1): $(2) will skip"
endef

# The AWS CLI v2 that the emulator's TestAWSCLI drives: Debian's awscli,
# installed when no aws v2 is found (a pip aws-cli 1.x earlier in PATH does
# not count).
awscli:
	@for dir in $$(echo "$$PATH" | tr ':' ' ') /usr/bin /usr/local/bin; do \
		if [ -x "$$dir/aws" ] && "$$dir/aws" --version 2>&1 | grep -q '^aws-cli/2\.'; then exit 0; fi; \
	done; \
	$(call apt_install,awscli,TestAWSCLI)

# jq, which the README's examples use to pick ids out of answers, and so
# TestREADME that runs them.
jq:
	@command -v jq >/dev/null 2>&1 && exit 0; \
	$(call apt_install,jq,TestREADME)

# Chromium, which the agent inspector's browser test (TestInspectorInBrowser)
# drives headless; without it that test fails in CI and skips elsewhere.
chromium:
	@command -v chromium >/dev/null 2>&1 && exit 0; \
	$(call apt_install,chromium,TestInspectorInBrowser)

lint:
	@unformatted="$$(gofmt -l $(GOFILES))"; \
	if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	@$(MAKE) --no-print-directory deadcode

# deadcode lists the functions no command (cmd/...) reaches, and fails on
# any outside the test helper packages: those whose non-test files import
# "testing", which only tests call (apitest, check, sinktest, ...). A
# function that only tests use moves to them (export_test.go). The
# exported functions and methods of exported types of package client are
# its users' API, which no command of sluice's needs to call.
deadcode: ## functions no command reaches, outside the test helper packages
	@helpers="$$($(GO) list -f '{{range .Imports}}{{if eq . "testing"}}{{$$.ImportPath}}{{end}}{{end}}' ./...)" || exit 1; \
	all="$$($(GO) tool deadcode -f '{{range .Funcs}}{{printf "%s %s: unreachable func: %s\n" $$.Path .Position .Name}}{{end}}' ./...)" || exit 1; \
	dead="$$(printf '%s\n' "$$all" | awk -v helpers="$$helpers" 'BEGIN { n = split(helpers, h, "\n"); for (i = 1; i <= n; i++) skip[h[i]] = 1 } NF && !($$1 in skip) { if ($$1 == "github.com/sluicehq/sluice/client" && $$NF ~ /^[A-Z][A-Za-z0-9]*(\.[A-Z][A-Za-z0-9]*)?$$/) next; sub(/^[^ ]* /, ""); print }')"; \
	if [ -n "$$dead" ]; then echo "deadcode: unreachable from every command:"; echo "$$dead"; exit 1; fi

# Fuzz budgets are execution counts, not durations: with a duration, Go
# 1.26's fuzz coordinator can report its own deadline as a failure at the
# end of the run (golang/go#75804, fixed in Go 1.27). A target whose
# committed corpus (testdata/fuzz) holds what its runs have found, so that
# a run on a fresh machine finds nothing new in it for its whole budget,
# has tens of thousands of executions; the others keep hundreds of
# thousands.
fuzz: ## a short run of each fuzz target, past its committed corpus
	$(GO) test -vet=off -run '^$$' -fuzz '^FuzzDecodeBatch$$' -fuzztime 300000x ./schemas
	$(GO) test -vet=off -run '^$$' -fuzz '^FuzzScanner$$' -fuzztime 300000x ./schemas
	$(GO) test -vet=off -run '^$$' -fuzz '^FuzzCursorSkip$$' -fuzztime 50000x ./schemas
	$(GO) test -vet=off -run '^$$' -fuzz '^FuzzEnvelopeRoundTrip$$' -fuzztime 50000x ./schemas
	$(GO) test -vet=off -run '^$$' -fuzz '^FuzzParseEventTime$$' -fuzztime 20000x ./schemas
	$(GO) test -vet=off -run '^$$' -fuzz '^FuzzDecodeObject$$' -fuzztime 100000x ./internal/strictjson
	$(GO) test -vet=off -run '^$$' -fuzz '^FuzzParseAuthorization$$' -fuzztime 20000x ./internal/authheader
	$(GO) test -vet=off -run '^$$' -fuzz '^FuzzCheck$$' -fuzztime 30000x ./internal/store
	$(GO) test -vet=off -run '^$$' -fuzz '^FuzzFilterBounds$$' -fuzztime 2000x ./filters
	$(GO) test -vet=off -run '^$$' -fuzz '^FuzzObjectFilter$$' -fuzztime 20000x ./filters
	$(GO) test -vet=off -run '^$$' -fuzz '^FuzzAllows$$' -fuzztime 100000x ./internal/acl
	$(GO) test -vet=off -run '^$$' -fuzz '^FuzzAppend$$' -fuzztime 300000x ./internal/jsonstring
	$(GO) test -vet=off -run '^$$' -fuzz '^FuzzPutRecordsBody$$' -fuzztime 20000x ./sinks/kinesis
	$(GO) test -vet=off -run '^$$' -fuzz '^FuzzPutRecordBatchBody$$' -fuzztime 20000x ./sinks/firehose
	$(GO) test -vet=off -run '^$$' -fuzz '^FuzzPutLogEventsBody$$' -fuzztime 20000x ./sinks/cloudwatchlogs
	$(GO) test -vet=off -run '^$$' -fuzz '^FuzzPutRecordsAnswer$$' -fuzztime 20000x ./sinks/kinesis
	$(GO) test -vet=off -run '^$$' -fuzz '^FuzzPutRecordBatchAnswer$$' -fuzztime 20000x ./sinks/firehose

# docs/performance.md says what each measures, its floors and the figures.
bench: ## micro-benchmarks, the ingest and delivery benchmarks against raw JetStream, memory with 1,000,000 events pending, the sinks into the emulator, the drain into a Kinesis endpoint in another process, the traffic policy's cost and memory, the DNS server's queries a second, the edge's TLS handshakes with 10,000 certificates
	$(GO) test -run '^$$' -bench . -benchmem -count 6 ./schemas
	$(GO) test -run '^$$' -bench . -benchmem -count 6 ./pipeline
	$(GO) run ./cmd/sluice-bench ingest
	$(GO) run ./cmd/sluice-bench deliver
	GOMEMLIMIT=200MiB $(GO) run ./cmd/sluice-bench deliver --pending
	$(GO) test -run '^$$' -bench . -benchmem -count 5 ./internal/emulator
	$(GO) run ./cmd/sluice-bench sinks
	$(GO) run ./cmd/sluice-bench drain
	$(GO) test -run '^$$' -bench RateLimit -benchmem -count 5 ./trafficpolicy
	$(GO) test -run '^$$' -bench MillionBuckets -benchtime 1x ./trafficpolicy
	$(GO) test -run '^$$' -bench UDPQueries -benchmem -count 5 ./internal/dnsserver
	$(GO) test -run '^$$' -bench 'Handshake|Lookup|CertificateMemory' -benchmem -count 3 ./edge

# Minutes of steady load through one process into the emulator, a line of
# figures every 10 s; fails when the resident memory keeps growing (the last
# third's median RSS more than 20% above the second third's). Not in CI. The
# first third, left out, covers JetStream's 2-minute duplicate window filling
# up (docs/performance.md).
SOAK_RATE ?= 2000
SOAK_DURATION ?= 6m
.PHONY: soak
soak: ## steady load for minutes: throughput, latency and resident memory over time; fails if memory keeps growing
	$(GO) run ./cmd/sluice-bench load --sink emulator --rate $(SOAK_RATE) --duration $(SOAK_DURATION) --interval 10s --max-rss-growth 0.2

# Tests of what sluice's dependencies do, not of sluice: run on an upgrade
# of nats.go or nats-server. Not in CI (they depend on the dependencies'
# timing). Each says what its failure means.
.PHONY: upstream-test
upstream-test: ## tests that show why sluice works around a dependency (the worker's repull); run on an upgrade
	SLUICE_UPSTREAM_TESTS=1 $(GO) test ./cmd/sluice -run 'TestClusterRouteStallsWithoutRepull' -count 1 -v

docs: ## regenerate the generated docs
	$(GO) run ./cmd/sluice schemas docs > docs/events.md
	$(GO) test ./internal/apiconv -run TestErrorsDocIsCurrent -update
	$(GO) generate ./...
