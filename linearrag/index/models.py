"""The writer's models, loaded when an operation first needs them and kept for the next, and
checked against the versions an index was built with."""

from __future__ import annotations

from pathlib import Path

from ..analysis import Analyzer
from ..encoders import load_encoder
from ..errors import ModelMismatchError
from .making import ner_info
from .meta import EmbeddingInfo, IndexMeta


class ModelCache:
    """One analyzer and one encoder at a time (``device``: where a newly loaded encoder runs)."""

    def __init__(self, path: Path, device: str):
        self.path, self.device = path, device
        self._analyzer: Analyzer | None = None
        self._analyzer_key: tuple | None = None
        self._encoder = None

    @property
    def encoder_loaded(self) -> bool:
        return self._encoder is not None

    def analyzer(self, lang: str, model: str | None, terms: bool) -> Analyzer:
        key = (lang, model, terms)
        if self._analyzer is None or self._analyzer_key != key:
            self._analyzer = Analyzer(lang, model, terms=terms)
            self._analyzer_key = key
        return self._analyzer

    def analyzer_for(self, meta: IndexMeta) -> Analyzer:
        """The analyzer an index was built with; a different installed version is an error."""
        analyzer = self.analyzer(meta.language, meta.ner.model, meta.build.terms)
        if ner_info(analyzer) != meta.ner:
            raise ModelMismatchError(f"{self.path}: built with {meta.ner.model} {meta.ner.version}, "
                                     f"installed {analyzer.model_version}; rebuild the index to add to it")
        return analyzer

    def encoder(self, model: str, precision: str, device: str | None = None, expect: EmbeddingInfo | None = None):
        """The encoder ``model`` (``expect``: the index's, whose version it must have)."""
        if self._encoder is None or self._encoder.name != model:
            self._encoder = load_encoder(model, precision=precision, device=device or self.device)
        if expect is not None and self._encoder.version != expect.version:
            raise ModelMismatchError(f"{self.path}: built with embedding model {expect.model} {expect.version}, "
                                     f"installed {self._encoder.version}; rebuild the index to add to it")
        return self._encoder
