# Tether developer tasks. `make test` is what CI and the README run.

.PHONY: all generate test test-citus vet lint fmt build dev bench

all: build

# Regenerate db/gen (sqlc), openapi/ (swag, then its OpenAPI 3 conversion by
# internal/tools/oas3) and internal/oapiclient (oapi-codegen, from the OpenAPI
# 3 document); all are committed and CI checks that they match their sources.
generate:
	go tool sqlc generate
	go tool -modfile=tools/go.mod swag init -q -g doc.go -d server,api -o openapi --ot json,yaml
	go run ./internal/tools/oas3 -in openapi/swagger.json -out openapi/openapi3
	go tool -modfile=tools/go.mod oapi-codegen -config internal/oapiclient/oapi-codegen.yaml openapi/openapi3.yaml

# Tests run against a real PostgreSQL: internal/pgtest starts a throwaway
# cluster (or uses TETHER_TEST_DATABASE_URL). Every package runs under the
# race detector (it needs cgo: a C compiler): the whole suite takes about
# five minutes with -race on a shared two-core machine.
test:
	go test -race -count=1 -timeout 20m ./...

# The storage conformance suite and the end-to-end suite on a Citus cluster
# (a coordinator and two workers on this machine), every test database
# distributed by namespace: scripts/citus.sh builds Citus from
# ../shared/citus/ (TETHER_CITUS_TARBALL), cached in ~/.cache/tether-citus,
# and installs it into the local PostgreSQL (as root). TETHER_CITUS_E2E=0
# leaves out the end-to-end suite (CI). docs/operations.md, "Running on
# Citus".
test-citus:
	bash scripts/citus.sh test

vet:
	go vet ./...

# golangci-lint, pinned in tools/go.mod (its own module, so that its
# dependencies stay out of Tether's); configuration in .golangci.yml.
lint:
	go tool -modfile=tools/go.mod golangci-lint run ./...

fmt:
	gofmt -w .

build:
	go build -o bin/tether ./cmd/tether

# A server with a throwaway database (unless TETHER_DATABASE_URL is set).
dev:
	go run ./cmd/tether dev

bench:
	go test -run '^$$' -bench . ./...
