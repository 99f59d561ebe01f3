#!/usr/bin/env bash
# Builds the Java stubs, the example and its test with javac against Debian's
# jars (grpc-java 1.41, protobuf-java 3.21, netty 4.1; no Maven Central) and
# runs the test with JUnit 4 against real tagqds it starts: TAGQD_BIN, else
# built from this repo with `go build ./cmd/tagqd`.
#   apt-get install -y default-jdk-headless libgrpc-java libprotobuf-java \
#     libgoogle-common-protos-java libnetty-java libperfmark-java \
#     libgoogle-gson-java libguava-java libjsr305-java liberror-prone-java \
#     libanimal-sniffer-java libgeronimo-annotation-1.3-spec-java junit4
# The compiled stubs are kept in build/ and recompiled only when a source
# is newer. Exits non-zero on any failure.
#   run_tests.sh example HOST:PORT [API_KEY]   builds, then runs the example
#                                              against a tagqd you started
set -euo pipefail
cd "$(dirname "$0")"
command -v go >/dev/null || export PATH="/usr/local/go/bin:$PATH"
j=/usr/share/java
# Compile time: the stubs need protobuf, grpc's api/stub/protobuf, guava,
# jsr305 and javax.annotation.Generated (grpc_java_plugin 1.41 annotates
# every *Grpc class with it; Java 9+ no longer ships it).
compile_jars=(protobuf grpc-api grpc-stub grpc-protobuf grpc-protobuf-lite grpc-context guava jsr305
  proto-google-common-protos geronimo-annotation-1.3-spec error_prone_annotations)
# Run time adds the netty transport and what grpc-core needs.
run_jars=(grpc-core grpc-netty netty-buffer netty-codec netty-codec-http netty-codec-http2 netty-codec-socks
  netty-common netty-handler netty-handler-proxy netty-resolver netty-transport perfmark-api gson
  animal-sniffer-annotations)
test_jars=(junit4 hamcrest-core)
cp_of() { local out="" jar; for jar in "$@"; do
  [ -f "$j/$jar.jar" ] || { echo "$j/$jar.jar missing: see the apt-get line at the top of $0" >&2; exit 1; }
  out+="${out:+:}$j/$jar.jar"; done; printf '%s' "$out"; }
compile_cp=$(cp_of "${compile_jars[@]}")
run_cp=$compile_cp:$(cp_of "${run_jars[@]}")
test_cp=$(cp_of "${test_jars[@]}")

mkdir -p build
stubs=build/stubs
if [ ! -f "$stubs.ok" ] || [ -n "$(find src/main/java -newer "$stubs.ok" -name '*.java' | head -1)" ]; then
  rm -rf "$stubs" && mkdir -p "$stubs"
  javac -nowarn -encoding UTF-8 -d "$stubs" -cp "$compile_cp" $(find src/main/java -name '*.java')
  touch "$stubs.ok"
fi
rm -rf build/classes && mkdir -p build/classes
javac -Xlint:all -Xlint:-processing -Werror -encoding UTF-8 -d build/classes -cp "$compile_cp:$stubs:$test_cp" \
  $(find src/examples/java src/test/java -name '*.java')
if [ "${1:-}" = example ]; then
  shift
  exec java -cp "$run_cp:$stubs:build/classes" com.tagq.examples.Walkthrough "$@"
fi
exec java -cp "$run_cp:$stubs:build/classes:$test_cp" org.junit.runner.JUnitCore com.tagq.examples.WalkthroughTest
