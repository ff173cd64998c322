"""Serve an index to a team: a JSON API (/v1), the MCP tools over streamable HTTP (/mcp), a
search page (/), optionally keeping the index in sync with a folder. See docs/serving.md.

  uv run linearrag serve indexes/docs                              # http://127.0.0.1:8765/
  uv run linearrag serve indexes/docs --watch ~/project/docs --token-file ~/.linearrag-token
  uv run linearrag serve indexes/docs --host 0.0.0.0 --token-file TOKEN --read-only
"""

from linearrag.commands import pin_query_threads

pin_query_threads()

import argparse
import logging
import socket
import sys
from pathlib import Path

import uvicorn

from linearrag import api
from linearrag.cli import run_cli, setup_logging
from linearrag.errors import ParameterError
from linearrag.index.directory import check_output, is_index_dir
from linearrag.index.store import load_index
from linearrag.retrieval.params import PRESETS
from linearrag.serve.app import create_app
from linearrag.serve.config import ServeConfig, read_token
from linearrag.serve.engine import Engine
from linearrag.serve.watch import FolderSync


def add_arguments(ap: argparse.ArgumentParser) -> None:
    """The flags of ``scripts/serve.py`` and ``linearrag serve``."""
    ap.add_argument("index", help="index directory (built by build_graph.py, or by --watch from its folder)")
    ap.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1; any other needs --token-file)")
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--token-file", metavar="FILE", help="bearer token for writes: the file's first line")
    ap.add_argument("--token-for-reads", action="store_true", help="reads need the token too")
    ap.add_argument("--read-only", action="store_true", help="no writes at all (API and MCP)")
    ap.add_argument("--root", action="append", metavar="DIR",
                    help="a directory documents may be added from (repeatable; default: the current directory; "
                         "the index directory, its uploads and --watch are always allowed)")
    ap.add_argument("--watch", metavar="DIR", help="keep the index in sync with this folder")
    ap.add_argument("--cors-origin", action="append", metavar="ORIGIN", default=[],
                    help="allow browser pages from ORIGIN to call the API (repeatable; default: none)")
    ap.add_argument("--workers", type=int, default=0,
                    help="query worker processes (default: one per core; 1 = answer in the server process)")
    ap.add_argument("--threads", type=int, default=1, help="query threads when --workers 1")
    ap.add_argument("--max-batch", type=int, default=8, help="waiting questions one thread answers together")
    ap.add_argument("--max-queue", type=int, default=1024, help="waiting questions beyond which requests get 503")
    ap.add_argument("--request-timeout", type=float, default=30.0, metavar="S", help="per query request")
    ap.add_argument("--max-body-mb", type=float, default=1.0, help="largest JSON body")
    ap.add_argument("--max-upload-mb", type=float, default=50.0, help="largest upload (all files of one request)")
    ap.add_argument("--upload-dir", metavar="DIR", help="where uploads are kept (default: INDEX/uploads)")
    ap.add_argument("--preset", default="default", choices=list(PRESETS))
    ap.add_argument("--param", action="append", metavar="NAME=VALUE", help="default retrieval parameter")
    ap.add_argument("--quiet", action="store_true", help="log warnings only (no request log)")


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(ap)
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    return run(parse_args(argv))


def run(args: argparse.Namespace) -> int:
    setup_logging(args.quiet)
    token = read_token(args.token_file) if args.token_file else None
    config = ServeConfig(index=args.index, host=args.host, port=args.port, roots=args.root or [], token=token,
                         token_for_reads=args.token_for_reads, read_only=args.read_only, watch=args.watch,
                         cors_origins=args.cors_origin, workers=args.workers, threads=args.threads, max_batch=args.max_batch,
                         max_queue=args.max_queue, request_timeout_s=args.request_timeout,
                         max_body_mb=args.max_body_mb, max_upload_mb=args.max_upload_mb, upload_dir=args.upload_dir,
                         quiet=args.quiet)
    params = api.query_params(args.preset, args.param)
    _check_port(config.host, config.port)   # before minutes of building or loading, not after
    if not is_index_dir(Path(config.index)):
        if not config.watch:
            raise ParameterError(f"{config.index}: no index here; build one with `linearrag build --input DOCS "
                                 f"--output {config.index}`, or pass --watch DOCS to build it from a folder")
        check_output(Path(config.index))   # a non-empty folder that is not an index is refused, untouched
        logging.getLogger("linearrag").info("building %s from %s", config.index, config.watch)
        api.writer(config.index, progress=sys.stderr.isatty()).build(config.watch)
    serve(config, params)
    return 0


def serve(config, params) -> None:
    """Load the index and models (the query worker processes), then serve until interrupted."""
    load_index(config.index)   # a damaged or missing index is one error line here, before any worker starts
    engine = Engine(config, params)
    engine.start()
    watcher = None
    if config.watch:
        watcher = FolderSync(config.watch, lambda folder: engine.writers.run(None, lambda w: w.update(folder)),
                             ignore=[Path(config.index), config.uploads])
    app = create_app(config, engine, watcher)
    workers = config.worker_processes
    print(f"serving {config.index} on http://{_url_host(config.host)}:{config.port}/ (API /v1, MCP /mcp"
          f"{_watching(config)}; {workers} query worker{'s' if workers > 1 else ''})", file=sys.stderr, flush=True)
    try:
        uvicorn.run(app, host=config.host, port=config.port, log_level="warning" if config.quiet else "info",
                    access_log=not config.quiet, timeout_keep_alive=15, limit_concurrency=1024,
                    timeout_graceful_shutdown=10)
    finally:
        engine.stop()


def _check_port(host: str, port: int) -> None:
    """A port another process holds (or an address this machine does not have) is one line."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ParameterError(f"--host {host}: cannot be resolved ({exc.strerror}); "
                             "pass an address of this machine") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            raise ParameterError(f"cannot listen on {host}:{port} ({exc.strerror}); pass another --port, "
                                 "or stop the process that holds it") from None


def _watching(config) -> str:
    return f", watching {config.watch}" if config.watch else ""


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def entry() -> None:
    """Console-script entry point."""
    run_cli(main)
