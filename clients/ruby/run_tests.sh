#!/usr/bin/env bash
# Runs the Ruby example's test (minitest) with Debian's ruby and ruby-grpc
# (gRPC 1.51, google-protobuf 3.21, googleapis-common-protos-types for
# google.rpc) against real tagqds it starts: TAGQD_BIN, else built from this
# repo with `go build ./cmd/tagqd`.
#   apt-get install -y ruby ruby-grpc
# Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")"
command -v go >/dev/null || export PATH="/usr/local/go/bin:$PATH"
exec ruby -I lib test/walkthrough_test.rb "$@"
