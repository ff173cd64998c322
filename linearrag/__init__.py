"""LinearRAG: zero-LLM multi-hop retrieval over a Tri-Graph of passages, sentences and entities.

>>> from linearrag import build_index, Retriever
>>> build_index("corpus.jsonl", "my-index")                      # doctest: +SKIP
>>> Retriever.from_path("my-index").query("Who is ...?").to_dict()  # doctest: +SKIP
"""

from .build import BuildConfig, build_index
from .corpus import Passage, load_corpus
from .errors import CorpusError, IndexFormatError, LinearRAGError, ModelMismatchError, ParameterError
from .retrieval import QueryResult, RetrievalParams, Retriever, preset
from .store import Index, load_index

__all__ = [
    "BuildConfig", "CorpusError", "Index", "IndexFormatError", "LinearRAGError", "ModelMismatchError",
    "ParameterError", "Passage", "QueryResult", "RetrievalParams", "Retriever", "build_index", "load_corpus",
    "load_index", "preset",
]
