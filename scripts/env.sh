# Sourced by demo.sh and test.sh: make uv available and the project environment current.
# shellcheck shell=bash
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ! command -v uv >/dev/null 2>&1; then
  export PATH="$HOME/.local/bin:$PATH"
  command -v uv >/dev/null 2>&1 || python3 -m pip install --quiet --user uv
fi

export UV_PYTHON_DOWNLOADS=never      # use the machine's Python 3.11
export TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1

# A CPU build of torch lies in the local wheelhouse on our machines (pip finds it through
# PIP_FIND_LINKS; uv needs to be told). Without it, resolve torch from PyPI instead.
if [ -n "${PIP_FIND_LINKS:-}" ] && [ -d "${PIP_FIND_LINKS}" ]; then
  export UV_FIND_LINKS="$PIP_FIND_LINKS"
fi
wheelhouse=$(sed -n 's/^source = { registry = "\(\/[^"]*\)" }$/\1/p' uv.lock | head -n 1)
if [ -n "$wheelhouse" ] && [ ! -d "$wheelhouse" ]; then
  echo "note: wheelhouse $wheelhouse not on this machine; taking torch from PyPI (uv.lock is updated locally)" >&2
  uv lock --upgrade-package torch
fi
# Bytecode is compiled here, once (imports take twice as long without it); not on every
# `uv run`, which would print "Bytecode compiled …" before each command's own output.
# LINEARRAG_EXTRAS: optional extras to install too (test.sh: ray, for the distributed-build tests).
# shellcheck disable=SC2086
uv sync --quiet --compile-bytecode ${LINEARRAG_EXTRAS:-}
