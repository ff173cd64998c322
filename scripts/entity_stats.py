"""Entity statistics of an index: entities per passage (by source) and, with --questions, the
share of questions that get no usable seed entity (the graph then falls back to BM25 + dense).

  uv run scripts/entity_stats.py --index indexes/jsquad --questions ../shared/benchmarks/jsquad/questions.jsonl
"""

import argparse
import json
import sys
from collections import Counter

from linearrag.commands import pin_query_threads

pin_query_threads()

import numpy as np  # noqa: E402

from linearrag import RetrievalParams, Retriever, load_index  # noqa: E402
from linearrag.questions import load_questions  # noqa: E402

SOURCES = {"TITLE": "title", "NounPhrase": "noun phrase (ja)", "Term": "common-noun term (ja)", "Person": "人名 tokens merged (ja)"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--index", required=True)
    ap.add_argument("--questions")
    ap.add_argument("--limit", type=int, default=None)
    args = ap.parse_args()
    idx = load_index(args.index)
    C, labels = idx.graph.C, idx.graph.entity_labels
    per_passage = np.diff(C.indptr)
    source = np.array([SOURCES.get(lbl, "NER") for lbl in labels])
    by_source = Counter()
    for s in SOURCES.values():
        by_source[s] = float(np.isin(C.indices, np.flatnonzero(source == s)).sum() / C.shape[0])
    by_source["NER"] = float(np.isin(C.indices, np.flatnonzero(source == "NER")).sum() / C.shape[0])
    report = {"passages": C.shape[0], "entities": C.shape[1],
              "entities_per_passage": round(float(per_passage.mean()), 2),
              "entities_per_passage_by_source": {k: round(v, 2) for k, v in by_source.items()}}
    if args.questions:
        questions = load_questions(args.questions)[: args.limit]
        r = Retriever(idx)
        analyzed = r.analyze_queries([q.question for q in questions])
        params = RetrievalParams()
        no_seed = sum(1 for a in analyzed if not r.link(a, params).seeds)
        no_ner = sum(1 for a in analyzed if not a.mentions)
        report.update(questions=len(questions),
                      no_usable_seed_pct=round(100 * no_seed / len(questions), 1),
                      no_ner_entity_pct=round(100 * no_ner / len(questions), 1))
    print(json.dumps(report, ensure_ascii=False, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
