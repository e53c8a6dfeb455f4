#!/usr/bin/env bash
# Runs a pnpm script of this workspace with Node.js 24 and pnpm 10, provisioning both under
# .tools/ when the machine's own are missing or older, then installing the dependencies.
#   bash scripts/run.sh start        # embedded service
#   bash scripts/run.sh test         # the whole test suite
#   bash scripts/run.sh bench        # any other script of package.json
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="$root/.tools"
node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

node_bin="$(command -v node || true)"
if [ -z "$node_bin" ] || [ "$(node_major "$node_bin")" -lt 24 ]; then
  if [ ! -x "$tools/bin/node" ] || [ "$(node_major "$tools/bin/node")" -lt 24 ]; then
    echo "docstore: provisioning Node.js 24 under .tools/" >&2
    npm install --global --prefix "$tools" --no-audit --no-fund --loglevel=error node@24 >&2
  fi
  export PATH="$tools/bin:$PATH"
fi
if ! command -v pnpm >/dev/null || [ "$(pnpm --version | cut -d. -f1)" -lt 10 ]; then
  if [ ! -x "$tools/bin/pnpm" ]; then
    echo "docstore: provisioning pnpm 10 under .tools/" >&2
    npm install --global --prefix "$tools" --no-audit --no-fund --loglevel=error pnpm@10 >&2
  fi
  export PATH="$tools/bin:$PATH"
fi

cd "$root"
pnpm install --frozen-lockfile --reporter=append-only >&2
exec pnpm run "$@"
