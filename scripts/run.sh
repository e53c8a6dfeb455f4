#!/usr/bin/env bash
# Runs a pnpm script of this workspace with Node.js 24 and pnpm 10, provisioning both under
# .tools/ when the machine's own are missing or older, then installing the dependencies.
# `start` runs the service as this process itself (see below): stop it with SIGTERM or SIGINT.
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
# A script that only runs one Node.js program (`start`, `start:api`, `start:worker`, the
# benchmarks) is exec'd here, not through pnpm: the program then is this very process, so the
# SIGTERM or SIGINT sent to it reaches the service, and its exit code (0 on a clean stop) is ours.
# Through pnpm, a signal ends pnpm alone, leaving the service running without it.
program="$(node -e '
  const script = require("./package.json").scripts?.[process.argv[1]] ?? "";
  const m = /^node ([\w./-]+)$/.exec(script);
  if (m) console.log(m[1]);
' "${1:-}")"
# glibc gives each thread that allocates its own malloc arena, up to 8 per core; LanceDB's native
# threads then hold hundreds of MB of freed memory apart. Two arenas keep the service's peak RSS
# about 300 MB lower at 200,000 documents (bench/scale.ts). Set MALLOC_ARENA_MAX to override.
export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}"
# glibc raises its mmap threshold (up to 32 MB) each time a large block is freed, and blocks
# below it come from the arenas, which keep them once freed. A fixed 4 MB threshold gives the
# index's large buffers back when a maintenance run ends: the service's peak RSS at 200,000
# documents was 1,355-1,374 MB against 1,386-1,534 (bench/scale.ts, in turns). Set
# MALLOC_MMAP_THRESHOLD_ to override.
export MALLOC_MMAP_THRESHOLD_="${MALLOC_MMAP_THRESHOLD_:-4194304}"
if [ -n "$program" ]; then
  shift
  exec node "$program" "$@"
fi
exec pnpm run "$@"
