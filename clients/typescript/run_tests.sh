#!/usr/bin/env bash
# Runs the TypeScript client's tests against a tagqd they build and start
# (or TAGQD_BIN). Installs the locked npm dependencies first if
# node_modules is missing, with `npm ci` (exactly package-lock.json, which
# it never rewrites).
set -euo pipefail
cd "$(dirname "$0")"
export PATH="$PATH:/usr/local/go/bin" # go, for building tagqd
[ -d node_modules ] || npm ci --no-audit --no-fund --loglevel=error
npm test
