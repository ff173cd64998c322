#!/usr/bin/env bash
# Set up, build an index of the shipped 2Wiki sample, and ask it a two-hop question.
source "$(dirname "$0")/env.sh"
uv run scripts/build_graph.py --input examples/2wiki-sample/corpus.jsonl --output indexes/2wiki-sample
uv run scripts/query_graph.py --index indexes/2wiki-sample --format text \
  --query "What nationality is Beatrice I, Countess of Burgundy's husband?"
