"""LinearRAG: zero-LLM multi-hop retrieval over a Tri-Graph of passages, sentences and entities.

>>> from linearrag import build_index, Retriever
>>> build_index("corpus.jsonl", "my-index")                      # doctest: +SKIP
>>> Retriever.from_path("my-index").query("Who is ...?").to_dict()  # doctest: +SKIP

Names are imported on first use, so that a command can set thread limits before numpy loads.
"""

import importlib

_EXPORTS = {
    "BuildConfig": ".index.config", "build_index": ".index.writer",
    "Passage": ".corpus", "load_corpus": ".corpus",
    "CorpusError": ".errors", "IndexFormatError": ".errors", "LinearRAGError": ".errors",
    "ModelMismatchError": ".errors", "ParameterError": ".errors",
    "QueryResult": ".retrieval", "RetrievalParams": ".retrieval", "Retriever": ".retrieval", "preset": ".retrieval",
    "Index": ".index.store", "load_index": ".index.store", "IndexWriter": ".index.writer",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'linearrag' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name], __name__), name)
