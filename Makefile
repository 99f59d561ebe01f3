# tagq developer commands. `make test` is the README's test command.
BUF := tools/node_modules/.bin/buf

.PHONY: test generate lint check-generate tools

test:
	go test ./...

tools: $(BUF)

$(BUF): tools/package.json tools/package-lock.json
	cd tools && npm ci --no-audit --no-fund --loglevel=error
	touch $(BUF)

# Regenerate gen/ from proto/: Go messages and gRPC (gen/tagq, a module of
# its own: keep its go.mod), the gateway (gen/gateway), Connect handlers
# (gen/connect) and OpenAPI.
# protoc-gen-openapiv2 writes Swagger 2.0; tools/openapi3 turns it into the
# OpenAPI 3 document tagqd serves, and the 2.0 one is dropped.
# tools/errcat makes the error reasons (constants for the server and the
# clients, docs/errors.md) from proto/tagq/v1/errors.yaml.
ERRCAT_OUT := tags/reasons_gen.go clients/go/reasons_gen.go clients/python/tagq/reasons.py \
	clients/typescript/src/reasons.ts docs/errors.md

generate: $(BUF)
	find gen/tagq -name '*.go' -delete
	rm -rf gen/gateway gen/connect gen/openapi/*.json
	$(BUF) generate
	go run ./tools/openapi3 -o gen/openapi/tagq.openapi.json gen/openapi/tagq.swagger.json
	rm gen/openapi/tagq.swagger.json
	go run ./tools/errcat

lint: $(BUF)
	$(BUF) lint
	$(BUF) format -d --exit-code

# Fails when gen/ (or what errcat makes) differs from what the protos and
# the error catalogue generate.
check-generate: generate
	@git status --porcelain -- gen $(ERRCAT_OUT) | grep . && { echo "generated code is stale: run make generate and commit"; git diff --stat -- gen $(ERRCAT_OUT); exit 1; } || true
