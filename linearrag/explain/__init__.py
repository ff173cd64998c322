"""Explanations over an index: entity paths and a corpus overview (entity communities)."""

from .overview import Overview, corpus_overview
from .paths import EntityGraph, PathResult, describe_paths

__all__ = ["EntityGraph", "Overview", "PathResult", "corpus_overview", "describe_paths"]
