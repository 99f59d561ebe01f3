#!/usr/bin/env bash
# Regenerates the Java, C++ and Ruby stubs of proto/tagq/v1 with buf (the
# repo's pinned buf: `make tools`) driving local generators only: protoc's
# built-in java, cpp and ruby, and Debian's gRPC plugins.
#   apt-get install -y protobuf-compiler protobuf-compiler-grpc \
#     protobuf-compiler-grpc-java-plugin
#   clients/generate.sh
# Output (committed; CI reruns this and fails on a diff):
#   clients/java/src/main/java/com/tagq/v1  Java messages and *Grpc stubs
#   clients/cpp/gen/tagq/v1                 C++ *.pb.* and *.grpc.pb.*
#   clients/cpp/gen/google/rpc              C++ Status and ErrorInfo    } from the subsets in
#   clients/java/src/main/java/com/tagq/rpc Java ErrorInfo               } clients/proto/google/rpc
#   clients/ruby/lib/tagq/v1                Ruby *_pb.rb and *_services_pb.rb
# The generators' versions are Debian's (protoc 3.21, gRPC 1.51 for C++ and
# Ruby, 1.41 for Java), and the generated code needs those runtimes.
set -euo pipefail
export LC_ALL=C
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
buf=${BUF:-tools/node_modules/.bin/buf}
[ -x "$buf" ] || { echo "$buf missing: run make tools" >&2; exit 1; }
command -v protoc >/dev/null || { echo "protoc missing: apt-get install -y protobuf-compiler" >&2; exit 1; }
for p in grpc_cpp_plugin grpc_ruby_plugin grpc_java_plugin; do
  command -v "$p" >/dev/null || {
    echo "$p missing: apt-get install -y protobuf-compiler-grpc protobuf-compiler-grpc-java-plugin" >&2; exit 1; }
done
rm -rf clients/java/src/main/java/com/tagq/v1 clients/java/src/main/java/com/tagq/rpc clients/cpp/gen \
  clients/ruby/lib/tagq/v1
"$buf" generate --template clients/buf.gen.yaml
# google.rpc's subsets: with protoc itself, as their language options are
# in the files (Ruby has googleapis' types from Debian's
# ruby-googleapis-common-protos-types, which ruby-grpc depends on).
protoc -I clients/proto --cpp_out=clients/cpp/gen google/rpc/status.proto google/rpc/error_details.proto
protoc -I clients/proto --java_out=clients/java/src/main/java google/rpc/error_details.proto
