#!/usr/bin/env bash
# Runs the TypeScript client's tests against a tagqd they build and start
# (or TAGQD_BIN). Installs the locked npm dependencies first if
# node_modules is missing. `npm install`, not `npm ci`: npm 11's ci fails on
# @bufbuild/buf's optional platform packages that the lockfile leaves out
# ("Missing: @bufbuild/buf-darwin-arm64 from lock file"); install still
# honours the committed package-lock.json.
set -euo pipefail
cd "$(dirname "$0")"
export PATH="$PATH:/usr/local/go/bin" # go, for building tagqd
[ -d node_modules ] || npm install --no-audit --no-fund --loglevel=error
npm test
