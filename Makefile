# warren: `make build` gives bin/warren and the static bin/envd and
# bin/interpreter it binds into every sandbox.
GO      ?= go
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)

.PHONY: build test test-all generate clean

build:
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/envd ./cmd/envd
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/interpreter ./cmd/interpreter
	$(GO) build -trimpath -ldflags "-X main.version=$(VERSION)" -o bin/warren ./cmd/warren

# Unit tests; root-only tests skip themselves without root.
test:
	$(GO) test ./...

# Everything, as root: setup, unit, conformance and end-to-end tests.
test-all:
	./scripts/test.sh

generate:
	$(GO) generate ./api/...

clean:
	rm -rf bin
