"""Typed query results; ``to_dict`` gives exactly the JSON documented in docs/query-json.md."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class QueryEntity:
    surface: str            # as written in the query
    entity: str | None      # matched index entity (display name), None below the floor
    similarity: float       # cosine between the surface and the matched entity
    how: str = "name"       # "name" (a name or title, exactly), "term" (a lowercase phrase, exactly),
                            # "similar" (the nearest entity by cosine), "none" (below the floor)


@dataclass
class ActivatedEntity:
    entity: str
    score: float
    level: int                          # 1 = seed, 2.. = step it joined
    sentence: str | None = None         # bridging sentence (level ≥ 2)
    passage_id: str | None = None       # passage of that sentence


@dataclass
class PassageHit:
    rank: int
    id: str
    title: str
    score: float
    text: str
    entities: list[str] = field(default_factory=list)  # activated entities the passage contains
    linked_from: str | None = None   # placed here because this passage above it names it (linked selection)
    linked_via: str | None = None    # … through this entity, a part of this passage's title ("Indiana")
    bridged_from: str | None = None  # placed here by bridged coverage: shares an entity with this passage above …
    bridged_via: str | None = None   # … this one ("China")
    adds_words: list[str] = field(default_factory=list)  # … and holds these question words no passage above holds
    file: str = ""                   # the source file, relative to the input root (JSONL: the corpus file)
    lines: list[int] | None = None   # [first, last] line in that file, 1-based, inclusive
    section: str = ""                # the heading path (a record's title)
    page: int | None = None          # PDF page, from 1
    defines: list[str] = field(default_factory=list)  # activated entities this passage defines (heading, term)
    copies: list[dict] = field(default_factory=list)  # ranked passages of the same text, left out ({id, file, lines})

    @property
    def citation(self) -> str:
        return citation_text(asdict(self))


@dataclass
class QueryResult:
    query: str
    mode: str
    query_entities: list[QueryEntity]
    activated_entities: list[ActivatedEntity]
    activated_count: int
    passages: list[PassageHit]
    fallback: str | None
    params: dict
    timings_ms: dict[str, float]
    warnings: list[str] = field(default_factory=list)   # e.g. a query in a language the index does not hold
    evidence_passages: list[str] = field(default_factory=list)  # seeds came from these passages' entities

    def to_dict(self) -> dict:
        return asdict(self)

    def format_text(self) -> str:
        """A human-readable rendering: the question's terms, the seeds (named in the question, or
        evidence seeds taken from the best passages), the reached entities, and the ranked
        passages with a relevance a person can read (% of the best passage's score)."""
        lines = [f"Query: {self.query}  (mode {self.mode})"]
        lines.extend(f"Warning: {w}" for w in self.warnings)
        if self.fallback:
            lines.append(f"Fallback: {self.fallback}")
        if self.evidence_passages:
            where = ", ".join(f"[{p}]" for p in self.evidence_passages)
            lines.append(f"The walk also starts from the entities of {where} (evidence seeds): the question's terms "
                         "alone are weak seeds" if any(q.entity for q in self.query_entities) else
                         f"No query entity: the walk starts from the entities of {where}")
        if self.query_entities:
            linked = ", ".join(
                f"{q.surface} → {q.entity} ({q.similarity:.2f})" if q.entity else f"{q.surface} → (no match)"
                for q in self.query_entities)
            lines.append(f"Query entities: {linked}")
        lines.extend(self._chain_lines())
        lines.append("Passages:")
        lines.extend(self._passage_lines())
        timing = ", ".join(f"{k} {v:.1f}" for k, v in self.timings_ms.items())
        lines.append(f"Timings (ms): {timing}")
        return "\n".join(lines)

    def _chain_lines(self) -> list[str]:
        seeds = [a for a in self.activated_entities if a.level == 1]
        reached = [a for a in self.activated_entities if a.level >= 2]
        if not seeds and not reached:
            return []
        lines = ["Entity chain:"]
        named = {q.entity for q in self.query_entities if q.entity}
        own = [a for a in seeds if a.entity in named or not self.evidence_passages]
        evidence = [a for a in seeds if a.entity not in named and self.evidence_passages]
        if own:
            lines.append("  named in the question: " + _capped([f"{a.entity} ({a.score:.2f})" for a in own], SHOWN_SEEDS))
        if evidence:
            lines.append("  evidence seeds (entities of the passages the query alone ranks best): "
                         + _capped([f"{a.entity} ({a.score:.2f})" for a in evidence], SHOWN_SEEDS))
        defined = {name: p.citation for p in reversed(self.passages) for name in self._definitions(p)}
        if reached:
            lines.append("  reached through a bridging sentence:")
            lines.extend(f'    L{a.level} {a.entity} ({a.score:.2f}) via "{a.sentence}" [{a.passage_id}]'
                         + (f" — defined in {defined[a.entity]}" if a.entity in defined else "")
                         for a in reached[:SHOWN_REACHED])
            if len(reached) > SHOWN_REACHED:
                lines.append(f"    +{len(reached) - SHOWN_REACHED} more")
        return lines

    def _definitions(self, p: PassageHit) -> list[str]:
        """The entities ``p`` defines that came from elsewhere: named in the question, or reached
        through a bridging sentence of another passage (not an evidence seed of its own)."""
        named = {q.entity for q in self.query_entities if q.entity}
        reached = {a.entity for a in self.activated_entities if a.level >= 2 and a.passage_id != p.id}
        return [name for name in p.defines if name in named or name in reached]

    def _passage_lines(self) -> list[str]:
        lines = []
        reached = {a.entity: a for a in self.activated_entities if a.level >= 2}
        best = max((p.score for p in self.passages), default=0.0)
        for p in self.passages:
            title = f" {p.section or p.title}" if (p.section or p.title) else ""
            where = p.citation if p.citation == p.id else f"{p.citation} [{p.id}]"
            lines.append(f"  {p.rank}. {where}{title} (relevance {relevance(p.score, best)} %)")
            if p.linked_from and p.linked_via:
                lines.append(f"     {p.linked_via}, in its title, is named by [{p.linked_from}] above")
            elif p.linked_from:
                lines.append(f"     named by [{p.linked_from}] above")
            elif p.bridged_from:
                words = ", ".join(f'"{w}"' for w in p.adds_words)
                lines.append(f"     adds the question's {words}, which no passage above holds; shares "
                             f"{p.bridged_via} with [{p.bridged_from}] above")
            if p.entities:
                lines.append(f"     entities: {', '.join(p.entities)}")
            hops = [reached[e] for e in p.entities if e in reached and reached[e].passage_id != p.id]
            if hops:
                how = "; ".join(f"{a.entity} (L{a.level}, bridging sentence in [{a.passage_id}])" for a in hops[:3])
                lines.append(f"     reached through: {how}")
            for name in self._definitions(p)[:3]:   # the definition of a term the question or another passage names
                lines.append(f"     reached through {name}, defined in {p.citation}")
            if p.copies:   # the same text elsewhere (same_text=collapse)
                shown = ", ".join(citation_text(c) for c in p.copies[:3])
                more = f" and {len(p.copies) - 3} more" if len(p.copies) > 3 else ""
                lines.append(f"     same text also at: {shown}{more}")
            snippet = p.text if len(p.text) <= 300 else p.text[:297] + "..."
            lines.append(f"     {snippet}")
        return lines


def citation_text(passage: dict) -> str:
    """A passage's citation as people write it (from the query JSON of one passage):
    ``path:first-last`` (``path:n`` for one line), ``path p. 3`` for a PDF page, else the id."""
    file, lines, page = passage.get("file"), passage.get("lines"), passage.get("page")
    if not file:
        return passage["id"]
    if page is not None:
        return f"{file} p. {page}"
    if not lines:
        return file
    first, last = lines
    return f"{file}:{first}" + (f"-{last}" if last != first else "")


SHOWN_SEEDS = 12      # seeds listed by name in the text view (then "+N more")
SHOWN_REACHED = 15    # reached entities listed with their sentences


def relevance(score: float, best: float) -> int:
    """A passage's score as a whole percentage of the best passage's (100 for the first);
    fusion sums and 1/rank scores mean nothing to a person, their ratio does."""
    if best <= 0:
        return 0
    return max(0, min(100, round(100 * score / best)))


def _capped(items: list[str], shown: int) -> str:
    more = f", +{len(items) - shown} more" if len(items) > shown else ""
    return ", ".join(items[:shown]) + more
