#!/usr/bin/env bash
# Lints tagq's OpenAPI document (Redocly, recommended rules: any error fails)
# and runs the README walk-through through the generated REST client against
# a tagqd this script builds and starts (or TAGQD_BIN), on free loopback
# ports, once it printed TAGQ_READY. `npm ci`: exactly the committed
# package-lock.json, which it never rewrites.
set -euo pipefail
cd "$(dirname "$0")"
export PATH="$PATH:/usr/local/go/bin" # go, for building tagqd
[ -d node_modules ] || npm ci --no-audit --no-fund --loglevel=error
npm run lint

tmp=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
bin=${TAGQD_BIN:-}
if [ -z "$bin" ]; then
  bin=$tmp/tagqd
  (cd ../.. && go build -o "$bin" ./cmd/tagqd)
fi
"$bin" --grpc-addr 127.0.0.1:0 --http-addr 127.0.0.1:0 --sqs-addr 127.0.0.1:0 >"$tmp/stdout" 2>"$tmp/stderr" &
pid=$!
ready=
for _ in $(seq 300); do # 30 s
  ready=$(grep -m1 '^TAGQ_READY ' "$tmp/stdout" || true)
  [ -n "$ready" ] && break
  kill -0 "$pid" 2>/dev/null || { echo "tagqd exited before it was ready:"; cat "$tmp/stderr"; exit 1; }
  sleep 0.1
done
[ -n "$ready" ] || { echo "tagqd not ready after 30 s:"; cat "$tmp/stderr"; exit 1; }
TAGQ_HTTP_ADDR=$(sed -n 's/.* http=\([^ ]*\).*/\1/p' <<<"$ready")
export TAGQ_HTTP_ADDR

status=0
npm test || status=$?
# tagqd must stop cleanly on SIGTERM.
kill -TERM "$pid"
code=0
wait "$pid" || code=$?
pid=
if [ "$code" -ne 0 ]; then
  echo "tagqd exited with status $code on SIGTERM:"; cat "$tmp/stderr"; exit 1
fi
exit "$status"
