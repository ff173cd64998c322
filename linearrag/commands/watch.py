"""Keep an index in sync with a folder: created, changed, moved and deleted files are applied
within seconds, a burst of changes as one commit. Builds the index first if there is none.
One JSON summary line per commit on stdout; logs on stderr; Ctrl-C stops it.

  uv run linearrag watch ~/project/docs --index indexes/docs
"""

import argparse
import json
import logging
import sys
import threading
from pathlib import Path

from linearrag import api
from linearrag.cli import run_cli, setup_logging
from linearrag.errors import ParameterError
from linearrag.index.directory import check_output, is_index_dir
from linearrag.serve.watch import FolderSync


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("folder", help="the folder of documents to follow")
    ap.add_argument("--index", required=True, help="the index directory (built from the folder if absent)")
    ap.add_argument("--quiet", action="store_true", help="log warnings only")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(ap)
    return run(ap.parse_args(argv))


def run(args: argparse.Namespace) -> int:
    setup_logging(args.quiet)
    folder, index = Path(args.folder), Path(args.index)
    if not folder.is_dir():
        raise ParameterError(f"{folder}: not a directory; pass the folder of documents to follow")
    writer = api.writer(index, progress=sys.stderr.isatty() and not args.quiet)
    if not is_index_dir(index):
        check_output(index)
        summary = writer.build(folder)
        print(json.dumps({"operation": "build", **{k: summary.get(k) for k in ("passages", "entities")}}), flush=True)
    sync = FolderSync(folder, writer.update, ignore=[index],
                      on_commit=lambda s: print(json.dumps(s, ensure_ascii=False, default=str), flush=True))
    logging.getLogger("linearrag").info("watching %s for %s (Ctrl-C stops)", folder, index)
    sync.start()
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        sync.stop()
    return 0


def entry() -> None:
    run_cli(main)
