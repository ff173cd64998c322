#!/usr/bin/env bash
# Set up and run the test suite (real spaCy, GiNZA and embedding models; no network).
source "$(dirname "$0")/env.sh"
uv run pytest "$@"
