#!/usr/bin/env bash
# Runs a pnpm script of this workspace with Node.js 24 and pnpm 10, provisioning both under
# .tools/ when the machine's own are missing or older, then installing the dependencies.
# `start` runs the service as this process itself (see below): stop it with SIGTERM or SIGINT.
# Works from any folder; `docstore` reads the paths it is given relative to that folder.
#   bash scripts/run.sh start                       # embedded service
#   bash scripts/run.sh test                        # the whole test suite
#   bash /path/to/docstore/scripts/run.sh docstore load ./docs -c kb   # the command-line tool
#   bash scripts/run.sh bench                       # any other script of package.json
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

# The folder this was run from: the command-line tool reads relative paths from there.
if [ "${1:-}" = docstore ]; then export DOCSTORE_CWD="$PWD"; fi
# A relative QDRANT_BIN names a file from that folder too (benches and tests start it elsewhere).
case "${QDRANT_BIN:-/}" in
  /*) ;;
  *) QDRANT_BIN="$PWD/$QDRANT_BIN" ;;
esac
cd "$root"
pnpm install --frozen-lockfile --reporter=append-only >&2
# A script that only runs one Node.js program is exec'd, not run through pnpm, so that signals
# reach the program and its exit code is ours (through pnpm, a signal ends pnpm alone).
program="$(node -e '
  const script = require("./package.json").scripts?.[process.argv[1]] ?? "";
  const m = /^node ([\w./-]+)$/.exec(script);
  if (m) console.log(m[1]);
' "${1:-}")"
# Two malloc arenas: with glibc's default (8 per core) LanceDB's native threads keep freed memory apart.
export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}"
# A fixed mmap threshold, so that the index's large buffers go back to the system once freed.
export MALLOC_MMAP_THRESHOLD_="${MALLOC_MMAP_THRESHOLD_:-4194304}"
# Young generations of 16 MB semi-spaces (V8 grew them to 64 MB in each of the service's two
# threads, and kept them): a lower peak, at the same speed (docs/benchmarks.md).
case " ${NODE_OPTIONS:-} " in
  *" --max-semi-space-size"*) ;;
  *) export NODE_OPTIONS="--max-semi-space-size=16${NODE_OPTIONS:+ $NODE_OPTIONS}" ;;
esac
if [ -n "$program" ]; then
  shift
  exec node "$program" "$@"
fi
exec pnpm run "$@"
