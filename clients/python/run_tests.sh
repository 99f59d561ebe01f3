#!/usr/bin/env bash
# Runs the Python client's tests with Debian's python3 (python3-grpcio,
# python3-protobuf) against a tagqd they start: built from this repo with
# `go build ./cmd/tagqd`, or the binary named by TAGQD_BIN. Exits non-zero on
# any failure.
set -euo pipefail
cd "$(dirname "$0")"
command -v go >/dev/null || export PATH="/usr/local/go/bin:$PATH"
export PYTHONDONTWRITEBYTECODE=1
exec /usr/bin/python3 -m unittest discover -s tests -t tests -v "$@"
