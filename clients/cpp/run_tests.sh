#!/usr/bin/env bash
# Builds the C++ stubs, the example and its test with make against Debian's
# gRPC 1.51 and protobuf 3.21 (pkg-config), then runs the test against real
# tagqds it starts: TAGQD_BIN, else built from this repo with
# `go build ./cmd/tagqd`.
#   apt-get install -y g++ make pkg-config libgrpc++-dev libprotobuf-dev
# Objects stay in build/, so a second run compiles only what changed (the
# generated code takes most of the time: about 45 s of CPU at -O0).
# Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")"
command -v go >/dev/null || export PATH="/usr/local/go/bin:$PATH"
make -s -j"$(nproc)" all
build/walkthrough_test
