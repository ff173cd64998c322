"""Question files: the benchmark ``questions.jsonl`` layout and LinearRAG's ``questions.json``."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from .corpus import read_utf8
from .errors import CorpusError
from .jsonl import jsonl_lines


@dataclass
class Question:
    id: str
    question: str
    answers: list[str] | None = None      # None: no answer known (Contain@5 not available)
    gold_ids: list[str] | None = None     # None: no gold passages (Recall not available)
    type: str | None = None
    facts: list[dict] | None = None       # docs layout: [{"file", "phrase"}], gold independent of chunking
    extra: dict = field(default_factory=dict)


def _read_text(path: Path) -> str:
    if not path.exists():
        raise CorpusError(f"{path}: no such file; pass an existing questions file")
    return read_utf8(path)


def load_questions(path: str | Path) -> list[Question]:
    """Load ``questions.jsonl`` ({"id", "question", "answers"?, "gold_ids"?, "type"?}) or
    LinearRAG ``questions.json`` (a list of {"id", "question", "answer", "question_type"})."""
    path = Path(path)
    text = _read_text(path)
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CorpusError(f"{path}:{exc.lineno}: malformed JSON ({exc.msg})") from None
        if not isinstance(data, list):
            raise CorpusError(f"{path}: expected a JSON list of questions")
        records = [(f"item {i}", r) for i, r in enumerate(data)]
    else:
        records = []
        for lineno, line in jsonl_lines(text):
            try:
                records.append((f"line {lineno}", json.loads(line)))
            except json.JSONDecodeError as exc:
                raise CorpusError(f"{path}:{lineno}: malformed JSON ({exc.msg}); fix or remove that line") from None
    questions = [_to_question(path, where, rec, i) for i, (where, rec) in enumerate(records)]
    if not questions:
        raise CorpusError(f"{path}: no questions in this file")
    return questions


def _to_question(path: Path, where: str, rec: object, i: int) -> Question:
    if not isinstance(rec, dict) or not isinstance(rec.get("question"), str) or not rec["question"].strip():
        raise CorpusError(f"{path}:{where}: expected an object with a non-empty string 'question'")
    answers = rec.get("answers")
    if answers is None and rec.get("answer") is not None:
        answers = [rec["answer"]]
    if answers is not None:
        answers = [str(a) for a in (answers if isinstance(answers, list) else [answers])]
    gold = rec.get("gold_ids")
    if gold is not None:
        gold = [str(g) for g in gold]
    qtype = rec.get("type", rec.get("question_type"))
    facts = rec.get("facts")
    if facts is not None and (not isinstance(facts, list) or not all(
            isinstance(f, dict) and isinstance(f.get("phrase"), str) and f["phrase"].strip() for f in facts)):
        raise CorpusError(f"{path}:{where}: 'facts' must be a list of {{\"file\", \"phrase\"}} objects")
    return Question(id=str(rec.get("id", i)), question=rec["question"], answers=answers, gold_ids=gold,
                    type=None if qtype is None else str(qtype), facts=facts or None)


def read_query_file(path: str | Path) -> list[tuple[str, str]]:
    """(id, question) pairs from a questions file, for batch querying."""
    return [(q.id, q.question) for q in load_questions(path)]
