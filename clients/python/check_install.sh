#!/usr/bin/env bash
# Installs the Python client as a user would, with pip from this folder
# into a scratch venv (Debian's python3-grpcio and python3-protobuf as the
# dependencies, Debian's setuptools and wheel to build: no network), and
# runs examples/quickstart.py with it against the tagqd at TAGQ_ADDR:
#   .ci/with-tagqd clients/python/check_install.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${TAGQ_ADDR:?the gRPC host:port of a running tagqd (.ci/with-tagqd sets it)}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A copy: pip builds in the source folder (build/, tagq.egg-info/).
cp -r "$here" "$tmp/src"
/usr/bin/python3 -m venv --system-site-packages "$tmp/venv"
"$tmp/venv/bin/pip" install --quiet --no-build-isolation --no-index --no-cache-dir "$tmp/src"
cd "$tmp" # away from the source tree: tagq must come from the venv
"$tmp/venv/bin/python" - <<'PY'
import sys
import tagq
import tagq.v1.queue_pb2
assert tagq.__file__.startswith(sys.prefix), f"tagq imported from {tagq.__file__}, not the venv {sys.prefix}"
print("installed:", tagq.__file__)
PY
"$tmp/venv/bin/python" "$here/examples/quickstart.py" "$TAGQ_ADDR"
