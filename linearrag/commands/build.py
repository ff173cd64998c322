"""Build a LinearRAG Tri-Graph index from a corpus (no LLM calls).

Example: uv run scripts/build_graph.py --input examples/2wiki-sample/corpus.jsonl --output indexes/sample
"""

import argparse
import json
import sys

from linearrag.build import BuildConfig, build_index
from linearrag.cli import run_cli, setup_logging
from linearrag.progress import progress_enabled


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", required=True, help="directory of .txt/.md, a .jsonl or a .json corpus file")
    ap.add_argument("--output", required=True, help="index directory to create or replace")
    ap.add_argument("--lang", default="auto", choices=["auto", "en", "ja"])
    ap.add_argument("--spacy-model", default=None, help="spaCy model name or path (default: per language)")
    ap.add_argument("--embedding-model", default=None, help="sentence-transformers model name or path")
    ap.add_argument("--max-chars", type=int, default=1000, help="passage size budget for directories")
    ap.add_argument("--batch-size", type=int, default=32, help="embedding batch size")
    ap.add_argument("--precision", choices=["auto", "fp32", "bf16"], default="auto",
                    help="embedding arithmetic; auto = bf16 where the CPU supports it")
    ap.add_argument("--workers", type=int, default=None, help="NER processes (default: 2 for corpora of 100,000+ characters on 2+ cores)")
    ap.add_argument("--isolated-sentences", action="store_true",
                    help="embed each sentence alone instead of in its passage's context (slower)")
    ap.add_argument("--no-title-entities", action="store_true", help="do not link a passage's title as an entity")
    ap.add_argument("--aliases", default=None, metavar="FILE",
                    help="TSV of alias<TAB>canonical names merged at index and query time (e.g. PPR<TAB>Personalized PageRank)")
    ap.add_argument("--merge-short-names", action="store_true",
                    help='a one-word name that shortens a longer one in the same passage is that entity ("Franklin")')
    ap.add_argument("--terms", choices=["auto", "on", "off"], default="auto",
                    help="English noun-phrase terms as entities (auto: for documents, not for titled records)")
    ap.add_argument("--quiet", action="store_true", help="no progress bars or info logs")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON on stdout")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    setup_logging(args.quiet)
    config = BuildConfig(lang=args.lang, spacy_model=args.spacy_model, embedding_model=args.embedding_model,
                         max_chars=args.max_chars, batch_size=args.batch_size,
                         precision=args.precision, workers=args.workers,
                         sentences_in_context=not args.isolated_sentences,
                         title_entities=not args.no_title_entities, terms=args.terms, merge_short_names=args.merge_short_names,
                         aliases=args.aliases)
    summary = build_index(args.input, args.output, config, progress=progress_enabled(args.quiet))
    if args.json:
        print(json.dumps(summary, ensure_ascii=False))
    elif not args.quiet:
        secs = ", ".join(f"{k} {v:.1f}s" for k, v in summary["seconds"].items())
        print(
            f"built {summary['index']} ({summary['language']}): {summary['passages']} passages, "
            f"{summary['sentences']} sentences, {summary['entities']} entities, "
            f"nnz C {summary['C_nnz']}, nnz M {summary['M_nnz']}; "
            + (f"{summary['aliases_merged']} aliases merged; " if args.aliases else "") + f"{secs}; "
            f"total {summary['seconds_total']:.1f}s; {summary['index_bytes'] / 1e6:.1f} MB on disk",
            file=sys.stderr,
        )
    return 0


def entry() -> None:
    """Console-script entry point."""
    run_cli(main)
