"""Names that vulture (scripts/check_shape.py) cannot see used: callbacks a framework calls,
fields that are serialised rather than read, tools registered by a decorator. vulture reads
this file as code that uses them; it is never run."""

_ = None
_.__getattr__             # linearrag/__init__.py: the package's lazy exports (PEP 562)
_.expansion_search        # linearrag/ann.py: a usearch.Index setting
_.description             # linearrag/commands/main.py: an argparse parser's description
_.normalizer              # linearrag/encoders/e5_model.py: tokenizers.Tokenizer parts
_.pre_tokenizer
_.handle_starttag         # linearrag/formats.py: html.parser.HTMLParser callbacks
_.handle_endtag
_.handle_data
attrs                     # their arguments
inliner                   # linearrag/rst.py: the docutils role and directive interface
optional_arguments
final_argument_whitespace
has_content
option_spec
messages
shard_workers             # dataclass fields written by asdict (linearrag/index/meta.py, retrieval/results.py)
sentences_embedded
activated_count
format_version            # linearrag/mcp_server.py: fields of the tools' TypedDict results
C_nnz
M_nnz
seconds_total
index_bytes
replaced
deleted_passages
explain_path              # linearrag/mcp_server.py: tools registered by @server.tool
build_index_tool
add_documents
remove_documents
update_index
