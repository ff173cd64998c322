"""The output stage: linked selection, then the ranked rows as a :class:`QueryResult` with the
entity chain (each activated entity's level and bridging sentence, each passage's entities)."""

from __future__ import annotations

import re

import numpy as np

from ..errors import IndexFormatError
from ..lang.code import name_suffixes
from ..normalize import normalize_entity, singular_key
from ..passage import HEADING_SEPARATOR
from .chain import (TitleMentions, linked_order, name_entities, named_pages, parts_like_the_question,
                    qualified_asked, title_parts)
from .copies import collapse_copies
from .cover import COVER_FROM, Coverage, bridge_entities
from .params import RetrievalParams
from .results import ActivatedEntity, PassageHit
from .space import Ranking
from .sparse import degrees


def heading_keys(title: str, first: bool) -> set[str]:
    """Entity keys a document passage defines, as the index keys headings: its own section
    heading (the last part of its heading path) and, for a document's first passage, the page
    title (the first part)."""
    parts = [p for p in title.split(HEADING_SEPARATOR) if p.strip()]
    return {singular_key(normalize_entity(p)) for p in ((parts[:1] if first else []) + parts[-1:])}


_DEFINED = re.compile(r"^`([^`\n]+)`(?::\s|:?$)", re.M)


def definition_keys(text: str) -> set[str]:
    """Entity keys a document passage defines in its text: code written as a line of its own (a
    described object's signature, ``TESTING``) or starting a line before a colon (a definition
    list's or a glossary's term: "`--reload`: Reload on change"), with the shorter names a
    qualified one is also written as."""
    return {normalize_entity(n) for m in _DEFINED.finditer(text) for n in (m.group(1), *name_suffixes(m.group(1)))}


_WORD = re.compile(r"\w+")


def readable_words(tokens: list[str], question: str) -> list[str]:
    """Each BM25 token as the question writes it: the first word of the question that the stem
    starts (a Snowball stem is the word's start, a final y aside: "countri" for "country"), else
    the token itself (Japanese normalised forms, a word the question writes otherwise)."""
    words = [(w, w.casefold()) for w in _WORD.findall(question)]
    return [next((w for w, f in words if f.startswith(t) or (t.endswith("i") and len(f) == len(t)
                                                             and f.startswith(t[:-1]))), t) for t in tokens]


class Output:
    """Turns a :class:`Ranking` into passages and activated entities of one index."""

    def __init__(self, index, entity_lookup, canonical, whole_words: bool, documents: bool, postings=None):
        self.index = index
        self.postings = postings        # the BM25 postings (lexical.Postings), for bridged coverage
        self.entity_lookup = entity_lookup
        self.canonical = canonical      # alias key → canonical key
        self.whole_words = whole_words  # titles are matched as whole words (languages with spaces)
        self.documents = documents

    def select(self, ranking: Ranking, params: RetrievalParams, question: str = "", tokens=()
               ) -> tuple[np.ndarray, np.ndarray, list[tuple[int, str | None, tuple[str, ...]]], dict[int, list[int]]]:
        """The first ``top_k`` rows after linked selection where the walk ran (see
        :meth:`linked_selection`), and per row (the position of the row above that names it — or,
        placed by coverage, shares an entity with it —, the title part it names or the shared
        entity or None, the question words coverage counted or ()); then, per kept row, the rows
        of the same text that ``same_text=collapse`` left out (:mod:`copies`)."""
        rows, scores, copies = ranking.rows, np.asarray(ranking.scores), {}
        if params.collapses_copies(self.documents):
            rows, scores, copies = collapse_copies(rows, scores, self.index.passage_texts.__getitem__)
        if ranking.activation is None:
            return rows[:params.top_k], scores[:params.top_k], [], copies
        return (*self.linked_selection(rows, scores, params, ranking.activation, question, tokens, ranking.named,
                                       ranking.prior), copies)

    def linked_selection(self, rows: np.ndarray, row_scores: np.ndarray, params: RetrievalParams, activation,
                         question: str = "", tokens=(), named=frozenset(), prior=None):
        """The first ``top_k`` of ``rows`` (best-scored first) after linked selection
        (retrieval/chain.py) — on corpora of titled records; off when ``link_depth`` ≤ 1 and on
        documents, where section headings are common words and it measured worse
        (docs/benchmarks.md); ``activation``: the walk's, for title parts (``link_parts``):
        (rows, their scores, per row the position of the passage above
        that names it, −1 where none, and the entity name of the title part it names, or None)).
        With ``link_reach`` the pages the best passage names by title join the candidates
        (:func:`chain.named_pages`, ``question``: the query text), scored as the last of them.
        With ``cover_weight`` the positions no link decides weigh bridged coverage
        (:mod:`cover`; ``tokens``: the query's BM25 tokens, ``named``: the entities it links); a row
        it placed gets (the position of the passage sharing the entity, that entity, the words).
        ``prior(rows)``: the query-only prior, which a title-part link must reach (``link_parts_prior``)."""
        rows = np.asarray(rows, dtype=np.int64)
        if params.link_depth <= 1 or len(rows) < 2 or self.documents:
            return rows[:params.top_k], row_scores[:params.top_k], []
        graph = self.index.graph
        joined = len(rows)
        if params.link_reach > 0 and self.whole_words:
            titles_of = self.index.passage_titles
            extra = named_pages(self.index.passage_texts[int(rows[0])], question, titles_of[int(rows[0])],
                                self.entity_lookup, self.canonical, (graph.arrays["CT_indptr"], graph.arrays["CT_indices"]),
                                titles_of.__getitem__, set(rows.tolist()), params.link_reach_df, params.link_reach)
            if extra:
                rows = np.concatenate([rows, np.asarray(extra, dtype=np.int64)])
                row_scores = np.concatenate([row_scores, np.full(len(extra), float(np.min(row_scores)))])
        titles = [self.index.passage_titles[r] for r in rows.tolist()]
        names = name_entities(titles, self.entity_lookup, self.canonical)
        texts = self.index.passage_texts
        mentions = TitleMentions(titles, lambda j: texts[int(rows[j])], whole_words=self.whole_words)
        parts, asked = None, set()
        if params.link_asked == "score" or (params.link_parts == "on" and self.whole_words):
            # the candidates whose title the question names: their title entity is a seed (level 1)
            own = names[names >= 0]
            asked = set(own[activation.lookup(own)[1] == 1].tolist()) if own.size else set()
            if params.asked_qualified == "best":
                asked |= qualified_asked(titles, names, asked, self.entity_lookup, self.canonical,
                                         lambda ents: activation.lookup(ents)[1])
        if params.link_parts == "on" and self.whole_words:
            # only entities the walk reached beyond the question (level ≥ 2) link a title part;
            # a candidate whose title the question names (a seed, level 1) keeps its place
            parts = title_parts(titles, self.entity_lookup, self.canonical)
            in_parts = np.asarray(sorted(set().union(*parts)), dtype=np.int64)
            reached = set(in_parts[activation.lookup(in_parts)[1] >= 2].tolist()) if in_parts.size else set()
            parts = [p & reached for p in parts]
            if params.link_parts_prior > 0 and prior is not None:
                parts = parts_like_the_question(parts, rows, prior, params.link_parts_prior)
        cover = (self.coverage(rows, params, tokens, named, question)
                 if params.cover_weight > 0 and params.top_k >= COVER_FROM else None)
        order, linked, via = linked_order(rows, names, graph.C_indptr, graph.C_indices, mentions,
                                          limit=params.top_k, parts=parts, asked=asked,
                                          asked_first=params.link_asked == "score", joined=joined, cover=cover)
        placed = [(s, graph.entity_names[v] if v >= 0 else None, ()) for s, v in zip(linked, via)]
        for pos, (source, entity, adds) in (cover.picks.items() if cover is not None else ()):
            placed[pos] = (source, graph.entity_names[entity], tuple(adds))
        return rows[order], row_scores[order], placed

    def coverage(self, rows: np.ndarray, params: RetrievalParams, tokens, named, question: str = "") -> Coverage | None:
        """The bridged coverage of the candidates ``rows`` (:mod:`cover`); None without tokens."""
        if not tokens or self.postings is None:
            return None
        graph = self.index.graph
        held, df = self.postings.presence(list(tokens), rows)
        bridges = bridge_entities(rows, graph.C_indptr, graph.C_indices,
                                  lambda ents: degrees(graph.arrays["CT_indptr"], ents), set(named), params.cover_df)
        words = readable_words(self.postings.known_tokens(list(tokens)), question)
        return Coverage(held, df, self.index.size, bridges, params.cover_weight, words)

    def check_finite(self, scores: np.ndarray) -> None:
        if not np.all(np.isfinite(np.asarray(scores, dtype=np.float64))):
            raise IndexFormatError(f"{self.index.path}: a score is not a number, so a vector or weight file is "
                                   f"damaged; run linearrag check {self.index.path} to find it, then rebuild the "
                                   "index or restore it from a copy")

    def hits(self, rows: np.ndarray, row_scores: np.ndarray, activation,
             linked: list[tuple[int, str | None, tuple[str, ...]]] = (),
             copies: dict[int, list[int]] | None = None) -> list[PassageHit]:
        idx, graph = self.index, self.index.graph
        copies = copies or {}
        hits = []
        for rank, (row, score) in enumerate(zip(rows.tolist(), np.asarray(row_scores).tolist()), start=1):
            ents: list[str] = []
            defines: list[str] = []
            if activation is not None:
                cols = np.asarray(graph.C_indices[graph.C_indptr[row]:graph.C_indptr[row + 1]], dtype=np.int64)
                scores, levels, _ = activation.lookup(cols)
                active = cols[levels > 0]
                order = np.lexsort((active, -scores[levels > 0]))
                ents = [graph.entity_names[e] for e in active[order].tolist()]
                if self.documents:
                    defined = (heading_keys(idx.passage_titles[row], idx.passage_ids[row].endswith("#0"))
                               | definition_keys(idx.passage_texts[row]))
                    defines = [graph.entity_names[e] for e in active[order].tolist() if graph.entity_keys[e] in defined]
            source, via, adds = linked[rank - 1] if rank <= len(linked) else (-1, None, ())
            linked_source = idx.passage_ids[int(rows[source])] if source >= 0 and not adds else None
            bridge_source = idx.passage_ids[int(rows[source])] if source >= 0 and adds else None
            cite = idx.citation(row)
            hits.append(PassageHit(rank=rank, id=idx.passage_ids[row], title=idx.passage_titles[row],
                                   score=round(float(score), 8), text=idx.passage_texts[row], entities=ents,
                                   linked_from=linked_source, linked_via=via if linked_source else None,
                                   bridged_from=bridge_source, bridged_via=via if bridge_source else None,
                                   adds_words=list(adds),
                                   file=cite.file, lines=list(cite.lines) if cite.lines else None,
                                   section=cite.section, page=cite.page, defines=defines,
                                   copies=[self.copy(c) for c in copies.get(row, [])]))
        return hits

    def copy(self, row: int) -> dict:
        """A left-out copy of a passage: its id and where it stands."""
        cite = self.index.citation(row)
        return {"id": self.index.passage_ids[row], "file": cite.file, "lines": list(cite.lines) if cite.lines else None,
                "page": cite.page}

    def activated(self, activation, limit: int) -> list[ActivatedEntity]:
        """The ``limit`` best activated entities: by level, then score, then id."""
        if activation is None:
            return []
        graph, idx = self.index.graph, self.index
        active = activation.active
        scores, levels, via = activation.lookup(active)
        order = np.lexsort((active, -scores, levels))
        out = []
        for i in order[:limit].tolist():
            s = int(via[i])
            sentence = graph.sentences[s] if s >= 0 else None
            passage = idx.passage_ids[int(graph.sentence_passage[s])] if s >= 0 else None
            out.append(ActivatedEntity(graph.entity_names[int(active[i])], round(float(scores[i]), 6), int(levels[i]),
                                       sentence, passage))
        return out
