#!/usr/bin/env bash
# Installs the locked npm dependencies if needed and runs the TypeScript
# client's tests against a tagqd they start. (npm install, not npm ci: npm
# 11's ci trips over optional platform packages missing from lockfiles.)
set -euo pipefail
cd "$(dirname "$0")"
[ -d node_modules ] || npm install --no-audit --no-fund --loglevel=error
npm test
