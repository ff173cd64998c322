"""The OpenAPI description of the HTTP API (served at ``/openapi.json``)."""

from __future__ import annotations

from functools import cache
from importlib.metadata import PackageNotFoundError, version
from typing import Any


def _version() -> str:
    try:
        return version("linearrag")
    except PackageNotFoundError:
        return "0"


def _json_body(schema: dict, required: bool = True) -> dict:
    return {"required": required, "content": {"application/json": {"schema": schema}}}


def _ok(description: str, schema: dict | None = None) -> dict:
    out: dict[str, Any] = {"description": description}
    if schema is not None:
        out["content"] = {"application/json": {"schema": schema}}
    return out


ERROR = {"$ref": "#/components/schemas/Error"}
ERRORS = {code: _ok(text, ERROR) for code, text in {
    "400": "bad request: the message names the problem and the fix",
    "401": "missing or invalid bearer token (writes; reads with --token-for-reads)",
    "413": "request body over the limit", "415": "a JSON body sent without Content-Type: application/json",
    "503": "server busy (too many waiting questions)",
    "504": "the query took longer than --request-timeout"}.items()}
QUERY_OPTIONS = {
    "top_k": {"type": "integer", "minimum": 1, "description": "passages to return (default 5)"},
    "mode": {"type": "string", "enum": ["linearrag", "dense", "bm25", "rrf"]},
    "params": {"type": "object", "description": "retrieval parameters by name (query_graph.py --list-params)"},
}
WRITE = [{"bearer": []}]


@cache
def openapi_spec() -> dict[str, Any]:
    query = {"type": "object", "required": ["question"], "additionalProperties": False,
             "properties": {"question": {"type": "string", "minLength": 1}, **QUERY_OPTIONS}}
    batch = {"type": "object", "required": ["questions"], "additionalProperties": False,
             "properties": {"questions": {"type": "array", "items": {"type": "string"}, "minItems": 1,
                                          "maxItems": 256}, **QUERY_OPTIONS}}
    path = {"type": "object", "additionalProperties": False, "properties": {"path": {"type": "string"}}}
    change = _ok("the change summary (counts, the new generation, committed)", {"type": "object"})
    return {
        "openapi": "3.1.0",
        "info": {"title": "LinearRAG server", "version": _version(),
                 "description": "Multi-hop retrieval with no LLM calls. Query JSON: docs/query-json.md; "
                                "the server: docs/serving.md."},
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {"Error": {"type": "object", "required": ["error"],
                                  "properties": {"error": {"type": "string"}}},
                        "QueryResult": {"type": "object", "description": "the query JSON of docs/query-json.md, "
                                        "plus `generation`: the committed index version that answered"}},
        },
        "paths": {
            "/healthz": {"get": {"summary": "liveness, and the generation being served",
                                 "responses": {"200": _ok("ok", {"type": "object"})}}},
            "/v1/index": {"get": {"summary": "counts, models, build settings of the index",
                                  "responses": {"200": _ok("the index's metadata", {"type": "object"}), **ERRORS}}},
            "/v1/query": {"post": {"summary": "the passages that answer a question, with the entity chain",
                                   "requestBody": _json_body(query),
                                   "responses": {"200": _ok("one result",
                                                            {"$ref": "#/components/schemas/QueryResult"}),
                                                 **ERRORS}}},
            "/v1/query_batch": {"post": {"summary": "several questions at once; results in order",
                                         "requestBody": _json_body(batch),
                                         "responses": {"200": _ok("{results: [...], generation}", {"type": "object"}),
                                                       **ERRORS}}},
            "/v1/explain": {"post": {"summary": "a query result with its explanation graph (the search page)",
                                     "requestBody": _json_body(query),
                                     "responses": {"200": _ok("{result, generation, elements, layout, style}",
                                                              {"type": "object"}), **ERRORS}}},
            "/v1/documents": {
                "post": {"summary": "add documents: a path under --root, or uploaded files (multipart/form-data)",
                         "security": WRITE,
                         "requestBody": {"required": True, "content": {
                             "application/json": {"schema": path},
                             "multipart/form-data": {"schema": {"type": "object", "properties": {
                                 "files": {"type": "array", "items": {"type": "string", "format": "binary"}}}}}}},
                         "responses": {"200": change, **ERRORS}},
                "delete": {"summary": "remove passages (or whole files) by id", "security": WRITE,
                           "requestBody": _json_body({"type": "object", "required": ["ids"],
                                                      "properties": {"ids": {"type": "array",
                                                                             "items": {"type": "string"}}}}),
                           "responses": {"200": change, "404": _ok("an unknown id; nothing removed", ERROR),
                                         **ERRORS}}},
            "/v1/update": {"post": {"summary": "re-sync the index with its sources (or with `path`)",
                                    "security": WRITE, "requestBody": _json_body(path, required=False),
                                    "responses": {"200": change, **ERRORS}}},
            "/mcp": {"post": {"summary": "the MCP tools over streamable HTTP (stateless, JSON responses); "
                                         "the writing tools only with the token",
                              "responses": {"200": _ok("a JSON-RPC response")}}},
        },
    }
