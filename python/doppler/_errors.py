"""Exceptions: the library's status codes and messages as Python exceptions."""

from . import _lib


class Error(Exception):
    """An error reported by libdoppler. str(e) is the library's message (it names the file and the
    place: line, field, op); e.code is the library's status (a negative DP_E* number) and e.kind its
    short name ("invalid input", "i/o error", ...)."""

    def __init__(self, message, code=_lib.DP_EINVAL):
        super().__init__(message)
        self.code = code
        self.kind = _KIND.get(code, "error")


class InvalidInputError(Error, ValueError):
    """Malformed input (DP_EINVAL): bad syntax, a wrong count, a value out of range, an op that is
    not ready, a device out of range."""


class CycleError(InvalidInputError):
    """The graph has a cycle (DP_ECYCLE)."""


class FileError(Error, OSError):
    """A file could not be opened, read or written (DP_EIO)."""


class CapacityError(Error):
    """A resource limit was exceeded (DP_ERANGE), e.g. a device's memory under the error policy, or
    a machine whose makespans would be inf or overflow (a peak_flops or bandwidth out of range for
    the graph: the message names the key)."""


class UnsupportedError(Error):
    """The library cannot do this here (DP_EUNSUPPORTED)."""


class LibraryMemoryError(Error, MemoryError):
    """Out of memory, or a size beyond what memory can hold (DP_ENOMEM)."""


class ClosedError(Error, ValueError):
    """The object was closed (or its graph was) and can no longer be used."""


class CopyError(Error, TypeError):
    """copy.copy, copy.deepcopy or pickle of an object that owns library memory (Graph, Engine,
    Env): a copy would share the C object and use it after the original frees it. Make a new
    one instead (Graph.read again, Engine(graph, machine), Env(graph, machine)); a Machine, plain
    settings, copies and pickles."""

    def __init__(self, message, code=_lib.DP_EUNSUPPORTED):
        super().__init__(message, code)


class _NoCopy:
    """Mixin: refuse copy, deepcopy and pickle with CopyError (the object owns C memory)."""

    def _no_copy(self, how):
        raise CopyError("doppler.%s cannot be %s: it owns library memory that a copy would share (make a new one)"
                        % (type(self).__name__, how))

    def __copy__(self):
        self._no_copy("copied (copy.copy)")

    def __deepcopy__(self, memo):
        self._no_copy("deep-copied (copy.deepcopy)")

    def __reduce_ex__(self, protocol):
        self._no_copy("pickled")

    def __getstate__(self):
        self._no_copy("pickled")


_KIND = {
    _lib.DP_EINVAL: "invalid input", _lib.DP_EIO: "i/o error", _lib.DP_ENOMEM: "out of memory",
    _lib.DP_ECYCLE: "cycle", _lib.DP_ERANGE: "out of range", _lib.DP_EUNSUPPORTED: "unsupported",
}
_CLASS = {
    _lib.DP_EINVAL: InvalidInputError, _lib.DP_ECYCLE: CycleError, _lib.DP_EIO: FileError,
    _lib.DP_ERANGE: CapacityError, _lib.DP_EUNSUPPORTED: UnsupportedError, _lib.DP_ENOMEM: LibraryMemoryError,
}


def from_status(code, err):
    """The exception for a failed call: status code and the filled dp_error."""
    if code == _lib.DP_OK:
        code = err.code if err.code != _lib.DP_OK else _lib.DP_EINVAL
    msg = _lib.text(err.msg) or "doppler: %s" % _KIND.get(code, "error")
    return _CLASS.get(code, Error)(msg, code)


def check(code, err):
    """Raise the library's error when code is not DP_OK."""
    if code != _lib.DP_OK:
        raise from_status(code, err)
