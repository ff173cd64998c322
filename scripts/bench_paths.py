"""How often `linearrag path` connects a question's entity to its answer passage's title.

For every compositional question of a benchmark set (2wiki), the question's entity is the
name the query links exactly (the longest), and the targets are the titles of its gold
passages other than the one named in the question; a question counts when a path of at most
--max-hops connects the question entity to every target.

  uv run scripts/bench_paths.py --index indexes/2wiki --questions ../shared/benchmarks/2wiki/questions.jsonl
"""

from linearrag.commands import pin_query_threads

pin_query_threads()

import argparse
import json
import statistics
import time

from linearrag import Retriever
from linearrag.explain.paths import EntityGraph, longest_exact_seed
from linearrag.normalize import normalize_entity
from linearrag.questions import load_questions
from linearrag.retrieval.linking import link_entities


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--index", required=True)
    ap.add_argument("--questions", required=True)
    ap.add_argument("--type", default="compositional")
    ap.add_argument("--max-hops", type=int, default=3)
    args = ap.parse_args()
    r = Retriever.from_path(args.index)
    graph = EntityGraph(r.index.graph.M)
    names = r.index.graph.entity_names
    questions = [q for q in load_questions(args.questions) if q.type == args.type and q.gold_ids]
    found, asked, hops, times = 0, 0, [], []
    for q in questions:
        a = r.analyze_queries([q.question])[0]
        seeds, _, _ = link_entities(a.ngrams, a.mentions, a.mention_vectors, r.entity_lookup, names, 1.0,
                                    aliases=r.aliases.keys)
        source = longest_exact_seed(seeds, names)
        if source is None:
            asked += 1
            continue
        targets = []
        for pid in q.gold_ids:
            row = r.index.row_of(pid)
            e = r.entity_lookup.get(normalize_entity(r.index.passage_titles[row])) if row is not None else None
            if e is not None and e != source:
                targets.append(e)
        asked += 1
        t0 = time.perf_counter()
        lengths = [graph.shortest_paths(source, t, args.max_hops, limit=1) for t in targets]
        times.append((time.perf_counter() - t0) * 1000)
        if targets and all(lengths):
            found += 1
            hops.append(max(len(p[0]) - 1 for p in lengths))
    out = {"questions": asked, "connected": found, "share": round(100 * found / max(asked, 1), 1),
           "max_hops": args.max_hops, "hops_median": statistics.median(hops) if hops else None,
           "ms_p50": round(statistics.median(times), 2) if times else None}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
