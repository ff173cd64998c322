"""Retrieval evaluation: metrics on rankings, and a runner that measures modes side by side."""

from .metrics import aggregate, contains_answer, normalize_answer, score_question
from .runner import evaluate

__all__ = ["aggregate", "contains_answer", "evaluate", "normalize_answer", "score_question"]
