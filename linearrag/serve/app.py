"""The HTTP front end: a versioned JSON API (``/v1``), the MCP tools over streamable HTTP
(``/mcp``), the search page (``/``) and its assets, ``/healthz`` and ``/openapi.json``.

Errors are JSON ``{"error": "<one line>"}`` with a 4xx code (5xx only for the server's own
faults), the same lines the CLI prints after ``error:``.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import re
import secrets
import time
from importlib.resources import files
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from .. import api
from ..errors import CorpusError, LinearRAGError
from ..explain.html import GRAPH_STYLE, LEVELS, query_elements
from ..mcp_server import create_server
from .config import ServeConfig, is_loopback
from .engine import Busy, Engine
from .openapi import openapi_spec
from .page import ASSETS, search_page

log = logging.getLogger(__name__)

QUERY_FIELDS = {"question", "top_k", "mode", "params"}
BATCH_FIELDS = {"questions", "top_k", "mode", "params"}
MAX_BATCH_QUESTIONS = 256
UPLOAD_NAME = re.compile(r"^[\w][\w .,+@()-]{0,200}$")


class HTTPError(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.headers = status, headers


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


class Auth:
    """Bearer-token checks: writes always need the token, reads only with --token-for-reads."""

    def __init__(self, token: str | None, for_reads: bool):
        self.token, self.for_reads = token, for_reads

    def valid(self, header: str | None) -> bool | None:
        """None: no Authorization header; else whether it carries the token (constant time)."""
        if header is None:
            return None
        scheme, _, value = header.partition(" ")
        if scheme.lower() != "bearer" or self.token is None:
            return False
        return hmac.compare_digest(value.strip().encode(), self.token.encode())

    def require(self, request: Request, write: bool) -> None:
        ok = self.valid(request.headers.get("authorization"))
        if ok is False:
            raise HTTPError(401, "invalid bearer token; send the server's token as `Authorization: Bearer TOKEN`",
                            {"WWW-Authenticate": 'Bearer error="invalid_token"'})
        if ok is None and (write or self.for_reads):
            if write and self.token is None:
                raise HTTPError(401, "writes are disabled: this server was started without --token-file; "
                                     "restart it with --token-file FILE and send that token",
                                {"WWW-Authenticate": "Bearer"})
            raise HTTPError(401, "this request needs the server's token: send `Authorization: Bearer TOKEN`",
                            {"WWW-Authenticate": "Bearer"})


async def _body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise HTTPError(413, f"request body of {int(declared)} bytes is over the limit of {limit} "
                             "(--max-body-mb); send less per request")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HTTPError(413, f"request body is over the limit of {limit} bytes (--max-body-mb); send less per request")
        chunks.append(chunk)
    return b"".join(chunks)


async def _json(request: Request, limit: int, allowed: set[str]) -> dict[str, Any]:
    raw = await _body(request, limit)
    if not raw.strip():
        return {}
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        # a page of another origin can send JSON only after a CORS preflight, never as a form
        raise HTTPError(415, f"the body must be sent as Content-Type: application/json (got {kind or 'none'!r})")
    try:
        body = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise HTTPError(400, f"the body is not JSON ({exc}); send a JSON object") from None
    if not isinstance(body, dict):
        raise HTTPError(400, f"the body must be a JSON object, got {type(body).__name__}")
    unknown = sorted(set(body) - allowed)
    if unknown:
        raise HTTPError(400, f"unknown field {unknown[0]!r}; known: {', '.join(sorted(allowed))}")
    return body


def _int_or_none(body: dict, name: str) -> int | None:
    value = body.get(name)
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
        raise HTTPError(400, f"{name} must be a positive integer, got {value!r}")
    return value


class API:
    """The endpoints, bound to one engine."""

    def __init__(self, config: ServeConfig, engine: Engine):
        self.config, self.engine = config, engine
        self.auth = Auth(config.token, config.token_for_reads)
        self.body_limit = int(config.max_body_mb * 1024 * 1024)
        self.upload_limit = int(config.max_upload_mb * 1024 * 1024)
        self.started = time.time()

    def routes(self) -> list[Route]:
        return [
            Route("/", self.page, methods=["GET"]),
            Route("/static/{name}", self.asset, methods=["GET"]),
            Route("/healthz", self.healthz, methods=["GET"]),
            Route("/openapi.json", self.openapi, methods=["GET"]),
            Route("/v1/index", self.info, methods=["GET"]),
            Route("/v1/query", self.query, methods=["POST"]),
            Route("/v1/query_batch", self.query_batch, methods=["POST"]),
            Route("/v1/explain", self.explain, methods=["POST"]),
            Route("/v1/documents", self.add_documents, methods=["POST"]),
            Route("/v1/documents", self.remove_documents, methods=["DELETE"]),
            Route("/v1/update", self.update, methods=["POST"]),
        ]

    # ---- reads ---------------------------------------------------------------------------
    async def page(self, request: Request) -> Response:
        return HTMLResponse(search_page(Path(self.engine.index).name, self.config.token_for_reads),
                            headers=PAGE_HEADERS)

    async def asset(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in ASSETS:
            raise HTTPError(404, f"no asset {name!r}")
        media, text = ASSETS[name]()
        return Response(text, media_type=media, headers={"Cache-Control": "public, max-age=3600"})

    async def healthz(self, request: Request) -> Response:
        d = self.engine.dispatcher
        return JSONResponse({"status": "ok", "generation": self.engine.generation(),
                             "waiting": d.waiting if d else 0, "uptime_s": round(time.time() - self.started, 1)})

    async def openapi(self, request: Request) -> Response:
        return JSONResponse(openapi_spec())

    async def info(self, request: Request) -> Response:
        self.auth.require(request, write=False)
        info = api.index_info(self.engine.index)
        d = self.engine.dispatcher
        info["server"] = {"generation": self.engine.generation(), "read_only": self.config.read_only,
                          "watch": self.config.watch, "query_workers": self.config.worker_processes,
                          "max_batch": self.config.max_batch, "answered": d.answered if d else 0}
        return JSONResponse(info)

    def _params(self, body: dict):
        params = body.get("params")
        if params is not None and not isinstance(params, dict):
            raise HTTPError(400, f"params must be an object of parameter names to values, got {params!r}")
        mode = body.get("mode")
        if mode is not None and not isinstance(mode, str):
            raise HTTPError(400, f"mode must be a string, got {mode!r}")
        return api.query_params(self.engine.params, params, _int_or_none(body, "top_k"), mode)

    async def _one(self, request: Request) -> tuple[dict, int]:
        self.auth.require(request, write=False)
        body = await _json(request, self.body_limit, QUERY_FIELDS)
        question = body.get("question")
        if not isinstance(question, str) or not question.strip():
            raise HTTPError(400, 'no question: send {"question": "…"} with some text')
        results, generation = await self.engine.query([question], self._params(body))
        return results[0], generation

    async def query(self, request: Request) -> Response:
        result, generation = await self._one(request)
        return JSONResponse(result | {"generation": generation})

    async def explain(self, request: Request) -> Response:
        result, generation = await self._one(request)
        return JSONResponse({"result": result, "generation": generation, "elements": query_elements(result),
                             "layout": LEVELS, "style": GRAPH_STYLE})

    async def query_batch(self, request: Request) -> Response:
        self.auth.require(request, write=False)
        body = await _json(request, self.body_limit, BATCH_FIELDS)
        questions = body.get("questions")
        if not isinstance(questions, list) or not questions:
            raise HTTPError(400, 'no questions: send {"questions": ["…", …]}')
        if len(questions) > MAX_BATCH_QUESTIONS:
            raise HTTPError(413, f"{len(questions)} questions in one request; send at most {MAX_BATCH_QUESTIONS}")
        for i, q in enumerate(questions):
            if not isinstance(q, str) or not q.strip():
                raise HTTPError(400, f"questions[{i}] is empty or not a string; every question needs some text")
        results, generation = await self.engine.query(questions, self._params(body))
        return JSONResponse({"results": results, "generation": generation})

    # ---- writes --------------------------------------------------------------------------
    def _writable(self, request: Request) -> None:
        self.auth.require(request, write=True)
        if self.config.read_only:
            raise HTTPError(403, "this server is --read-only; the index cannot be changed through it")

    async def add_documents(self, request: Request) -> Response:
        self._writable(request)
        if request.headers.get("content-type", "").startswith("multipart/form-data"):
            target = await self._save_uploads(request)
        else:
            body = await _json(request, self.body_limit, {"path"})
            path = body.get("path")
            if not isinstance(path, str) or not path.strip():
                raise HTTPError(400, 'send {"path": "FILE_OR_DIR"} (a path on the server, under --root) '
                                     "or upload files as multipart/form-data")
            target = self.engine.confined(path, "path")
        return JSONResponse(await self.engine.change("add", target))

    async def _save_uploads(self, request: Request) -> Path:
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.upload_limit:
            raise HTTPError(413, f"upload of {int(declared)} bytes is over the limit of {self.upload_limit} "
                                 "(--max-upload-mb)")
        async with request.form(max_files=1000, max_fields=10, max_part_size=self.upload_limit) as form:
            uploads = [v for _, v in form.multi_items() if hasattr(v, "filename")]
            if not uploads:
                raise HTTPError(400, "no file in the upload; send files as multipart/form-data fields")
            names = []
            for up in uploads:
                name = Path(up.filename or "").name
                if not UPLOAD_NAME.match(name) or name.startswith("."):
                    raise HTTPError(400, f"upload name {up.filename!r} is not a plain file name; rename it")
                names.append(name)
            if len(set(names)) != len(names):
                raise HTTPError(400, "two uploaded files have the same name; send each name once")
            folder = self.config.uploads.expanduser() / f"{time.strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(4)}"
            folder.mkdir(parents=True)
            total = 0
            for up, name in zip(uploads, names):
                data = await up.read()
                total += len(data)
                if total > self.upload_limit:
                    raise HTTPError(413, f"upload over the limit of {self.upload_limit} bytes (--max-upload-mb)")
                (folder / name).write_bytes(data)
        return folder

    async def remove_documents(self, request: Request) -> Response:
        self._writable(request)
        body = await _json(request, self.body_limit, {"ids"})
        ids = body.get("ids")
        if not isinstance(ids, list) or not ids or not all(isinstance(i, str) and i.strip() for i in ids):
            raise HTTPError(400, 'send {"ids": ["passage or file id", …]}')
        return JSONResponse(await self.engine.change("remove", ids))

    async def update(self, request: Request) -> Response:
        self._writable(request)
        body = await _json(request, self.body_limit, {"path"})
        path = body.get("path")
        if path is not None and (not isinstance(path, str) or not path.strip()):
            raise HTTPError(400, f"path must be a path string, got {path!r}")
        source = self.engine.confined(path, "path") if path else None
        return JSONResponse(await self.engine.change("update", source))


PAGE_HEADERS = {
    # The page and its scripts come from this server only; it talks to this server only. Inline
    # styles are allowed because Cytoscape.js positions its canvas with style attributes.
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
                               "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; "
                               "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


class ErrorsAsJSON:
    """Anticipated failures as JSON with a 4xx code; the rest one line with 500 (and a log)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started = False

        async def tracking_send(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception as exc:   # noqa: BLE001
            if started:
                raise
            response = _exception_response(exc)
            await response(scope, receive, send)


def _exception_response(exc: Exception) -> Response:
    if isinstance(exc, HTTPError):
        return _error(exc.status, str(exc), exc.headers)
    if isinstance(exc, Busy):
        return _error(503, f"server busy: {exc}", {"Retry-After": "1"})
    if isinstance(exc, TimeoutError):
        return _error(504, "the query took longer than --request-timeout; retry, or raise the limit")
    if isinstance(exc, CorpusError) and "no passage or file with id" in str(exc):
        return _error(404, str(exc))
    if isinstance(exc, LinearRAGError):
        return _error(400, str(exc))
    log.exception("internal error")
    return _error(500, f"internal error ({type(exc).__name__}: {exc}); the server keeps serving")


class McpGate:
    """``/mcp``: a request with the valid token reaches every tool; one without reaches the
    reading tools (unless --token-for-reads); a wrong token is 401."""

    def __init__(self, full, reading, auth: Auth):
        self.full, self.reading, self.auth = full, reading, auth

    async def __call__(self, scope, receive, send):
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        ok = self.auth.valid(headers.get("authorization"))
        if ok is False or (ok is None and self.auth.for_reads):
            await _error(401, "this request needs the server's token: send `Authorization: Bearer TOKEN`",
                         {"WWW-Authenticate": "Bearer"})(scope, receive, send)
            return
        app = self.full if ok and self.full is not None else self.reading
        await app(scope, receive, send)


def create_app(config: ServeConfig, engine: Engine, watcher=None) -> Starlette:
    """The ASGI application. ``engine`` is started (index and models loaded) by the caller,
    before the port opens; ``watcher``: started and stopped with the application."""
    handlers = API(config, engine)
    auth = handlers.auth
    mcp_host = config.host if is_loopback(config.host) else "0.0.0.0"
    reading = create_server(pool=engine.pool, read_only=True, name="linearrag")
    reading_app = reading.streamable_http_app(stateless_http=True, json_response=True, host=mcp_host)
    full = full_app = None
    if not config.read_only:
        full = create_server(pool=engine.pool, writers=engine.writers, name="linearrag")
        full_app = full.streamable_http_app(stateless_http=True, json_response=True, host=mcp_host)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        async with contextlib.AsyncExitStack() as stack:
            for server in (reading, full):
                if server is not None:
                    await stack.enter_async_context(server.session_manager.run())
            if watcher is not None:
                watcher.start()
                stack.callback(watcher.stop)
            stack.callback(engine.stop)
            yield

    middleware = [Middleware(ErrorsAsJSON)]
    if is_loopback(config.host):
        # A web page the user visits cannot reach a loopback server through a rebound DNS name.
        middleware.append(Middleware(TrustedHostMiddleware,
                                     allowed_hosts=["127.0.0.1", "localhost", "::1", "[::1]"]))
    if config.cors_origins:
        middleware.append(Middleware(CORSMiddleware, allow_origins=config.cors_origins,
                                     allow_methods=["GET", "POST", "DELETE"],
                                     allow_headers=["Authorization", "Content-Type"]))
    routes = handlers.routes() + [Route("/mcp", McpGate(full_app, reading_app, auth), methods=["GET", "POST", "DELETE"])]
    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan)
    app.add_exception_handler(404, lambda req, exc: _error(404, f"no such endpoint: {req.method} {req.url.path}; "
                                                                 "see /openapi.json"))
    app.add_exception_handler(405, lambda req, exc: _error(405, f"{req.method} is not allowed on {req.url.path}; "
                                                                 "see /openapi.json"))
    return app
