#!/usr/bin/env bash
# Fuzzes the running service from its own OpenAPI document with schemathesis: every operation,
# with examples, boundary values and random data, checking that no answer is a 5xx and that
# every answer (status, media type, headers, body) is one the document describes, and that a
# method the document does not list for a path answers 405 with Allow.
#
#   bash bench/fuzz.sh                     # or: bash scripts/run.sh bench:fuzz
#   FUZZ_EXAMPLES=200 bash bench/fuzz.sh   # most cases per operation and phase (default 60)
#   FUZZ_SECONDS=300 bash bench/fuzz.sh    # time budget of the whole run (default 240)
#   FUZZ_SEED=7 bash bench/fuzz.sh         # another random seed (default 1, so runs repeat)
#
# It makes a Python virtual environment under .bench/ (git-ignored) with schemathesis from
# PyPI, starts the embedded service on a free loopback port with a throwaway DATA_DIR and
# token, runs schemathesis against /openapi.json, then stops the service and removes the
# DATA_DIR. Exit code: schemathesis's (0 when it found nothing). Extra arguments go to
# `schemathesis run` (e.g. `--checks all` for the stricter checks as well).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.bench/schemathesis-venv"

if [ ! -x "$venv/bin/schemathesis" ]; then
  echo "fuzz: installing schemathesis into $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet "schemathesis>=4.32,<5"
fi

data_dir="$(mktemp -d "${TMPDIR:-/tmp}/docstore-fuzz-XXXXXX")"
log="$data_dir.log"
token="fuzz_$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
service_pid=""
cleanup() {
  if [ -n "$service_pid" ] && kill -0 "$service_pid" 2>/dev/null; then
    kill -TERM "$service_pid" 2>/dev/null || true
    wait "$service_pid" 2>/dev/null || true
  fi
  rm -rf "$data_dir" "$log"
}
trap cleanup EXIT

# PORT=0: the service picks a free port and prints it on its ready line.
PORT=0 HOST=127.0.0.1 DATA_DIR="$data_dir" API_TOKENS="$token" LOG_LEVEL="${LOG_LEVEL:-warn}" \
  WAIT_TIMEOUT_MS="${WAIT_TIMEOUT_MS:-5000}" node "$root/packages/api/src/main.ts" >"$log" 2>&1 &
service_pid=$!
url=""
for _ in $(seq 1 300); do
  url="$(sed -n 's/^docstore ready at \(http:[^ ]*\).*/\1/p' "$log" | head -n 1)"
  [ -n "$url" ] && break
  if ! kill -0 "$service_pid" 2>/dev/null; then
    cat "$log" >&2
    echo "fuzz: the service did not start" >&2
    exit 1
  fi
  sleep 0.1
done
[ -n "$url" ] || { cat "$log" >&2; echo "fuzz: the service did not report ready" >&2; exit 1; }
echo "fuzz: service at $url (DATA_DIR $data_dir)" >&2

# One worker: with more, schemathesis 4.32 on Python 3.11 fails in its own code now and then
# ("AST constructor recursion depth mismatch"), and the service has the 2 cores to itself.
# From .bench/, where schemathesis and hypothesis keep their caches (git-ignored).
cd "$root/.bench"
status=0
"$venv/bin/schemathesis" run "$url/openapi.json" \
  --header "Authorization: Bearer $token" \
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance,unsupported_method,allow_header_conformance \
  --max-examples "${FUZZ_EXAMPLES:-60}" \
  --max-time "${FUZZ_SECONDS:-240}" \
  --request-timeout 30 \
  --workers 1 \
  --seed "${FUZZ_SEED:-1}" \
  --no-color \
  "$@" || status=$?

if grep -q '"level":50\|"level":60' "$log"; then
  echo "fuzz: the service logged errors:" >&2
  grep -m 20 '"level":50\|"level":60' "$log" >&2
  [ "$status" -ne 0 ] || status=1
fi
exit "$status"
