#!/usr/bin/env bash
# Installs the TypeScript client as a user would: `npm pack` (prepack builds
# it), then `npm install` of the tarball into a scratch ESM project (its
# dependencies from the npm registry). Compiles examples/quickstart.ts there
# against the package's shipped types (NodeNext resolution, through its
# "exports") and runs it against the tagqd at TAGQ_ADDR:
#   .ci/with-tagqd clients/typescript/check_install.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${TAGQ_ADDR:?the gRPC host:port of a running tagqd (.ci/with-tagqd sets it)}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$here"
[ -d node_modules ] || npm install --no-audit --no-fund --loglevel=error
tgz=$(npm pack --pack-destination "$tmp" --loglevel=error | tail -n 1)
echo "packed: $tgz ($(tar -tzf "$tmp/$tgz" | wc -l) files)"

mkdir "$tmp/app" && cd "$tmp/app"
printf '{ "name": "tagq-install-check", "private": true, "type": "module" }\n' >package.json
# @types/node as the client's own devDependencies pin it (for node:assert).
types_node=$(node -p "require('$here/package.json').devDependencies['@types/node']")
npm install --no-audit --no-fund --loglevel=error "$tmp/$tgz" "@types/node@$types_node"
cp "$here/examples/quickstart.ts" .
"$here/node_modules/.bin/tsc" --strict --target es2022 --module nodenext --moduleResolution nodenext \
  --skipLibCheck --types node --outDir out quickstart.ts
node out/quickstart.js "$TAGQ_ADDR"
