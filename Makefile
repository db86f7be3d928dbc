# corral — the two commands a new user needs are `make run` and `make test`.
ADDR    ?= 127.0.0.1:8080
DB      ?= $(or $(CORRAL_DATABASE_URL),corral.db)
BIN     := bin/corral
# Fuzzing budget per target: a count of runs, not a duration. A duration races
# Go's fuzz coordinator (golang/go#75804, fixed in Go 1.27): on a busy machine it
# fails with "context deadline exceeded" and no failing input. 50,000 runs take
# a few seconds per target here.
FUZZTIME ?= 50000x
# Fuzz targets, as package:FuzzName; each runs FUZZTIME times under `make test`.
FUZZ_TARGETS := \
	./models/placement:FuzzParseMemberOf \
	./models/scheduling:FuzzParseRequirement \
	./models/pycompat:FuzzPyString \
	./handlers/jsonschema:FuzzValidate \
	./handlers/placementapi:FuzzParseListQuery \
	./handlers/placementapi:FuzzVersionHeader \
	./handlers/placementapi:FuzzCandidateQuery \
	./handlers/query:FuzzParseMatrixFilter \
	./handlers/compute:FuzzParseServerGroupCreate \
	./handlers/compute:FuzzParseQuotaSetUpdate \
	./models/cloud:FuzzParseNovaConf \
	./models:FuzzDecodeWorld

GO_SOURCES := $(shell find . -name '*.go' -not -path './bin/*')

.PHONY: run build test unit fuzz bench generate lint clean

run: build
	./$(BIN) serve --addr $(ADDR) --db $(DB) --demo

build: $(BIN)

$(BIN): $(GO_SOURCES) go.mod go.sum $(shell find static views -type f)
	go build -o $(BIN) ./cmd/corral

test: lint unit fuzz

unit:
	go test -count=1 -timeout 30m ./...

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$pkg $$name, $(FUZZTIME)"; \
		go test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) $$pkg; \
	done

bench:
	go test -run '^$$' -bench . -benchmem -timeout 60m ./...
	go run ./cmd/corral-load
	go run ./cmd/corral-bench

# Without the version comment, which would sit above `package` and become
# every views package's doc.
generate:
	go tool templ generate -include-version=false

# lint: gofmt, go vet, staticcheck, shadowed declarations (outside generated
# views and tests), a tidy go.mod, and generated views that match their
# templates. The tools are pinned in go.mod's tool block.
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '_templ\.go$$')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	go vet ./...
	go tool staticcheck ./...
	@out=$$(go vet -vettool=$$(go tool -n shadow) ./... 2>&1 | grep -v '^#' | grep -v '_templ\.go:' | grep -v '_test\.go:'); \
	if [ -n "$$out" ]; then echo "shadowed declarations:"; echo "$$out"; exit 1; fi
	go mod tidy -diff
	go tool templ generate -include-version=false -log-level error
	@out=$$(git status --porcelain -- '*_templ.go'); \
	if [ -n "$$out" ]; then echo "generated views differ from their templates (run make generate and commit):"; echo "$$out"; exit 1; fi

clean:
	rm -rf bin
