#!/usr/bin/env bash
# Set up and run the test suite (real spaCy, GiNZA and embedding models; no network).
# bash scripts/test.sh [--fast] [pytest arguments]
export LINEARRAG_EXTRAS="--extra ray"   # the Ray build path is tested on a local Ray instance
source "$(dirname "$0")/env.sh"
# The HTML views are tested in a real browser: Debian's chromium (Playwright drives it).
if ! command -v chromium >/dev/null 2>&1 && [ -z "${LINEARRAG_CHROMIUM:-}" ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing chromium for the HTML view tests (apt-get)" >&2
    { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
      || echo "note: apt-get could not install chromium; the HTML view tests will fail" >&2
  else
    echo "note: no chromium found; install it (apt-get install chromium) or set LINEARRAG_CHROMIUM, else the HTML view tests fail" >&2
  fi
fi
# --fast: only the tests not marked slow (no model loads, no index builds; under two minutes)
if [ "${1:-}" = "--fast" ]; then
  shift
  exec uv run --extra ray pytest -m "not slow" "$@"
fi
uv run --extra ray pytest "$@"
