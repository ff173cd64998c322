"""Exceptions with one-line messages that name the problem and the fix.

Every error the CLIs report to a user derives from :class:`LinearRAGError`; the
scripts print ``error: <message>`` and exit with status 2.
"""


class LinearRAGError(Exception):
    """Base class: a problem the user can fix (bad input, bad index, bad parameter)."""


class CorpusError(LinearRAGError):
    """The input corpus is missing, empty or malformed."""


class IndexFormatError(LinearRAGError):
    """The index directory is missing, incomplete, corrupt or of another format version."""


class ModelMismatchError(LinearRAGError):
    """The models installed now differ from those the index was built with."""


class ParameterError(LinearRAGError):
    """A retrieval or build parameter is unknown or out of range."""
