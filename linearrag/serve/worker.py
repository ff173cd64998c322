"""The application factory each server worker process runs (``--workers N``): it reads the
settings the parent checked, loads the index and the models, and starts its query threads.
Workers share the memory-mapped index files through the page cache; each sees a commit at its
next request (it compares the index's CURRENT file before every batch)."""

from __future__ import annotations

import json
import os
from dataclasses import asdict

from ..retrieval import RetrievalParams
from .app import create_app
from .config import ServeConfig
from .engine import Engine

ENV = "LINEARRAG_SERVE_SETTINGS"


def settings_env(config: ServeConfig, params: RetrievalParams) -> str:
    return json.dumps({"config": asdict(config), "params": params.to_dict()})


def app():
    """uvicorn's factory (``linearrag.serve.worker:app``)."""
    settings = json.loads(os.environ[ENV])
    config = ServeConfig(**settings["config"])
    engine = Engine(config, RetrievalParams(**settings["params"]))
    engine.start()
    return create_app(config, engine)
