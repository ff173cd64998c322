"""Two-stage retrieval over a Tri-Graph index."""

from .params import PRESETS, RetrievalParams, parse_overrides, preset
from .results import ActivatedEntity, PassageHit, QueryEntity, QueryResult
from .retriever import Retriever

__all__ = ["PRESETS", "ActivatedEntity", "PassageHit", "QueryEntity", "QueryResult", "RetrievalParams",
           "Retriever", "parse_overrides", "preset"]
