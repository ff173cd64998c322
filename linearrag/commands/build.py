"""Build a LinearRAG Tri-Graph index from a corpus (no LLM calls), or change one.

Examples:
  uv run scripts/build_graph.py --input examples/2wiki-sample/corpus.jsonl --output indexes/sample
  uv run scripts/build_graph.py --output indexes/notes --update            # re-sync with its input
  uv run scripts/build_graph.py --output indexes/notes --add more-notes/   # add (or replace) documents
  uv run scripts/build_graph.py --output indexes/notes --remove old.md#0 drafts.md
  uv run scripts/build_graph.py --output indexes/notes --compact
"""

import argparse
import json
import sys
from pathlib import Path

from linearrag import api
from linearrag import lang as languages
from linearrag.cli import run_cli, setup_logging
from linearrag.corpus import DEFAULT_MAX_FILE_MB, read_utf8
from linearrag.encoders.torch_env import DEVICES
from linearrag.errors import CorpusError
from linearrag.index.config import TERMS_CHOICES, BuildConfig
from linearrag.jsonl import jsonl_lines
from linearrag.progress import progress_enabled


def add_arguments(ap: argparse.ArgumentParser) -> None:
    """The flags of ``build_graph.py`` and ``linearrag build`` (one definition for both)."""
    ap.add_argument("--input", help="directory of .txt/.md/.html/.pdf, a .jsonl or a .json corpus file "
                    "(with --update: the source to re-sync with; default the recorded one)")
    ap.add_argument("--output", required=True, help="index directory to create, replace or change")
    change = ap.add_mutually_exclusive_group()
    change.add_argument("--update", action="store_true",
                        help="re-sync the index with its input: index new and changed files or records, drop removed ones")
    change.add_argument("--add", metavar="PATH", help="add the passages of PATH (an id or file already indexed is replaced)")
    change.add_argument("--remove", nargs="+", metavar="ID", help="remove passages by id (a file name removes all its passages)")
    change.add_argument("--remove-file", metavar="IDS.txt", help="remove the passage ids listed one per line in this file")
    change.add_argument("--compact", action="store_true", help="rewrite the live passages into one segment (reclaims space)")
    ap.add_argument("--no-wait", action="store_true", help="fail at once if another process is writing the index "
                    "(default: wait for it)")
    ap.add_argument("--lang", default="auto", choices=languages.CHOICES)
    ap.add_argument("--spacy-model", default=None, help="spaCy model name or path (default: per language)")
    ap.add_argument("--embedding-model", default=None, help="sentence-transformers model name or path")
    ap.add_argument("--max-chars", type=int, default=1000, help="passage size budget for directories")
    ap.add_argument("--max-file-mb", type=float, default=DEFAULT_MAX_FILE_MB,
                    help=f"the largest document (or record text) read, in MB (default {DEFAULT_MAX_FILE_MB}); a larger "
                         "file is refused (one input file) or skipped with a warning (in a directory)")
    ap.add_argument("--batch-size", type=int, default=32, help="embedding batch size")
    ap.add_argument("--precision", choices=["auto", "fp32", "bf16", "int8"], default="auto",
                    help="embedding arithmetic; auto = bf16 where the CPU supports it; int8 (e5 on x86): faster, slightly "
                         "lower recall (docs/build.md)")
    ap.add_argument("--workers", type=int, default=None,
                    help="worker processes (or Ray actors), each analysing and embedding whole shards with its own "
                         "models (default: one per core once the corpus has 2+ shards; 1 = this process)")
    ap.add_argument("--shard-passages", type=int, default=500,
                    help="passages per shard (default 500; a file is never split); finished shards of a killed "
                         "build are reused when it is run again with the same input and options")
    ap.add_argument("--ray", metavar="local|ADDRESS", default=None,
                    help="run the shards on Ray: 'local' starts a local Ray instance, an address joins a cluster "
                         "(needs the ray extra: uv sync --extra ray)")
    ap.add_argument("--device", choices=DEVICES, default="cpu",
                    help="where embeddings run (auto: cuda when available); CPU results are the reference")
    ap.add_argument("--isolated-sentences", action="store_true",
                    help="embed each sentence alone instead of in its passage's context (slower)")
    ap.add_argument("--no-title-entities", action="store_true", help="do not link a passage's title as an entity")
    ap.add_argument("--aliases", default=None, metavar="FILE",
                    help="TSV of alias<TAB>canonical names merged at index and query time (e.g. PPR<TAB>Personalized PageRank)")
    ap.add_argument("--merge-short-names", action="store_true",
                    help='a one-word name that shortens a longer one in the same passage is that entity ("Franklin")')
    ap.add_argument("--terms", choices=TERMS_CHOICES, default="auto",
                    help="English noun-phrase terms as entities (auto: for documents, not for titled records)")
    ap.add_argument("--quiet", action="store_true", help="no progress bars or info logs")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON on stdout")


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(ap)
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    return run(parse_args(argv))


def run(args: argparse.Namespace) -> int:
    setup_logging(args.quiet)
    changing = args.update or args.add or args.remove or args.remove_file or args.compact
    if not changing and not args.input:
        raise CorpusError("--input is required to build an index (or pass --update, --add, --remove or --compact)")
    if args.input and (args.add or args.remove or args.remove_file or args.compact):
        raise CorpusError("--input goes with a build or --update; --add takes its own path")
    if args.workers is not None and args.workers < 1:
        raise CorpusError(f"--workers must be at least 1, got {args.workers}")
    if args.shard_passages < 1:
        raise CorpusError(f"--shard-passages must be at least 1, got {args.shard_passages}")
    config = BuildConfig(lang=args.lang, spacy_model=args.spacy_model, embedding_model=args.embedding_model,
                         max_chars=args.max_chars, max_file_mb=args.max_file_mb, batch_size=args.batch_size,
                         precision=args.precision, workers=args.workers, shard_passages=args.shard_passages,
                         ray=args.ray, device=args.device,
                         sentences_in_context=not args.isolated_sentences,
                         title_entities=not args.no_title_entities, terms=args.terms, merge_short_names=args.merge_short_names,
                         aliases=args.aliases)
    writer = api.writer(args.output, config, progress=progress_enabled(args.quiet), wait=not args.no_wait)
    if args.update:
        summary = writer.update(args.input)
    elif args.add:
        summary = writer.add(args.add)
    elif args.remove or args.remove_file:
        summary = writer.remove(args.remove or read_ids(args.remove_file))
    elif args.compact:
        summary = writer.compact()
    else:
        summary = writer.build(args.input)
    if args.json:
        print(json.dumps(summary, ensure_ascii=False))
    elif not args.quiet and summary["operation"] != "build":
        print(describe_change(summary), file=sys.stderr)
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


def read_ids(path: str) -> list[str]:
    """Passage ids, one per line (blank lines and lines starting with # skipped)."""
    if not Path(path).is_file():
        raise CorpusError(f"{path}: no such file; pass a text file with one passage id per line")
    return [line.strip() for _, line in jsonl_lines(read_utf8(Path(path)))
            if line.strip() and not line.lstrip().startswith("#")]


def describe_change(s: dict) -> str:
    parts = [f"{k} {s[k]}" for k in ("added", "replaced", "removed") if s.get(k)]
    if "files_new" in s:   # a re-sync: sources are files (directories) or records (.jsonl/.json)
        parts.append(f"sources: {s['files_new']} new, {s['files_changed']} changed, {s['files_removed']} removed, "
                     f"{s['unchanged']} unchanged")
    what = ", ".join(parts) or "nothing to change"
    state = (f"generation {s['generation']}" if s["committed"] else "up to date, nothing committed")
    compacted = "; compacted" if s.get("compacted") else ""
    return (f"{s['operation']} {s['index']}: {what}; now {s['passages']} passages, {s['entities']} entities in "
            f"{s['segments']} segment(s), {state}{compacted}; {s['seconds_total']:.1f}s")


def entry() -> None:
    """Console-script entry point."""
    run_cli(main)
