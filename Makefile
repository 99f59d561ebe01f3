# tagq developer commands. `make test` is the README's test command.
BUF := tools/node_modules/.bin/buf

.PHONY: test generate lint check-generate tools

test:
	go test ./...

tools: $(BUF)

$(BUF): tools/package.json tools/package-lock.json
	cd tools && npm install --no-audit --no-fund --loglevel=error
	touch $(BUF)

# Regenerate gen/ from proto/: Go messages, gRPC, gateway and OpenAPI.
generate: $(BUF)
	rm -rf gen/tagq gen/openapi/*.json
	$(BUF) generate

lint: $(BUF)
	$(BUF) lint
	$(BUF) format -d --exit-code

# Fails when gen/ differs from what the protos generate.
check-generate: generate
	@git status --porcelain -- gen | grep . && { echo "gen/ is stale: run make generate and commit"; git diff --stat -- gen; exit 1; } || true
