#!/usr/bin/env bash
# Runs the Python client's tests with Debian's python3 (python3-grpcio,
# python3-protobuf) against a tagqd they start.
set -euo pipefail
cd "$(dirname "$0")"
exec /usr/bin/python3 -m unittest discover -s tests -v
