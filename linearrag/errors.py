"""Exceptions with one-line messages that name the problem and the fix.

Every error the CLIs report to a user derives from :class:`LinearRAGError`; the
scripts print ``error: <message>`` and exit with status 2.
"""


import errno
import os


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


class StoreWriteError(LinearRAGError):
    """Writing the index failed (disk full, quota, file-size limit, read-only, …)."""


_CAUSES = {
    errno.ENOSPC: ("no space left on device", "free some space and run it again"),
    errno.EDQUOT: ("disk quota exceeded", "free some space or raise the quota and run it again"),
    errno.EFBIG: ("file too large (a file-size limit of this process or file system)",
                  "lift the limit (ulimit -f) or write the index elsewhere"),
    errno.EROFS: ("read-only file system", "write the index to a writable place"),
    errno.EACCES: ("permission denied", "check the index directory's permissions"),
    errno.EPERM: ("operation not permitted", "check the index directory's permissions"),
    errno.EIO: ("input/output error", "check the disk"),
}


def write_failure(exc: OSError, index: os.PathLike | str, committed: bool = False) -> StoreWriteError:
    """An OSError met while writing ``index`` as one line: the cause, the file, what state the
    index is in, and the fix."""
    cause, fix = _CAUSES.get(exc.errno, (exc.strerror or str(exc) or type(exc).__name__, "run it again"))
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS) or exc.errno is None:
        where = f" while writing {exc.filename or index}"
    else:
        where = f" ({exc.filename})" if exc.filename else f" while changing {index}"
    state = ("the change was committed, but cleaning up after it failed" if committed
             else "the index is unchanged and the partial generation was removed")
    return StoreWriteError(f"{cause}{where}; {state}; {fix}")
