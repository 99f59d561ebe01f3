#!/usr/bin/env bash
# Regenerates the Python stubs in clients/python/gen with Debian's protoc and
# grpc_python_plugin (apt-get install protobuf-compiler protobuf-compiler-grpc).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
rm -rf "$here/gen"
mkdir -p "$here/gen"
protoc -I "$root/proto" -I "$here/../proto" \
  --python_out="$here/gen" --grpc_python_out="$here/gen" \
  --plugin=protoc-gen-grpc_python="$(command -v grpc_python_plugin)" \
  "$root"/proto/tagq/v1/*.proto "$here"/../proto/tagqclient/rpc.proto
