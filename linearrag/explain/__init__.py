"""Explanations over an index: entity paths (and, later, views for people)."""

from .paths import EntityGraph, PathResult, describe_paths

__all__ = ["EntityGraph", "PathResult", "describe_paths"]
