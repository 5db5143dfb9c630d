"""Crash-safe output: Parquet streams and atomic JSON/text files.

A file at its final path is always complete: data is written to a temporary
name in the same folder and moved into place with ``os.replace`` (atomic on
POSIX and Windows). An interrupted Parquet stream still gets its footer, so
every row group finished before Ctrl-C stays readable.
"""

from __future__ import annotations

import json
import os
import tempfile
import warnings
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

PARTIAL_SUFFIX = ".partial"


def _fsync_file(path: str) -> None:
    with open(path, "rb") as fh:
        os.fsync(fh.fileno())


def _fsync_dir(path: str) -> None:
    """Persist a rename; a no-op where directories cannot be opened (Windows)."""
    try:
        fd = os.open(path or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class ParquetStream:
    """Write row groups to ``<path>.partial``; move to ``path`` when finished.

    ``close()`` finishes normally. ``abort()`` (or an exception, including
    KeyboardInterrupt, inside a ``with`` block) also writes the footer and
    moves the file into place, so finished row groups are never lost. If even
    the footer cannot be written, the partial file is deleted rather than
    leaving a corrupt file at ``path``.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        schema: pa.Schema,
        *,
        compression: str = "zstd",
        metadata: Mapping[str, str] | None = None,
    ) -> None:
        self.path = os.fspath(path)
        self.partial_path = self.path + PARTIAL_SUFFIX
        self.schema = schema
        self.rows_written = 0
        self.row_groups = 0
        self.closed = False
        file_schema = schema
        if metadata:
            file_schema = schema.with_metadata({**(schema.metadata or {}), **metadata})
        parent = os.path.dirname(self.path)
        if parent:
            os.makedirs(parent, exist_ok=True)
        self._writer = pq.ParquetWriter(self.partial_path, file_schema, compression=compression)

    def _as_table(self, data: pa.Table | pa.RecordBatch | Mapping[str, Any]) -> pa.Table:
        if isinstance(data, pa.RecordBatch):
            data = pa.Table.from_batches([data])
        if isinstance(data, pa.Table):
            names = data.column_names
        elif isinstance(data, Mapping):
            names = list(data)
        else:
            raise TypeError(f"expected a pyarrow Table/RecordBatch or a dict of arrays, got {type(data).__name__}")
        missing = [n for n in self.schema.names if n not in names]
        extra = [n for n in names if n not in self.schema.names]
        if missing or extra:
            raise ValueError(f"columns do not match the schema of {self.path}: missing {missing}, extra {extra}")
        if isinstance(data, pa.Table):
            return data.select(self.schema.names).cast(self.schema)
        return pa.Table.from_pydict(dict(data), schema=self.schema)

    def write(self, data: pa.Table | pa.RecordBatch | Mapping[str, Any]) -> None:
        """Append one row group; empty data is skipped (no empty row groups)."""
        if self.closed:
            raise ValueError(f"write to closed ParquetStream {self.path}")
        table = self._as_table(data)
        if table.num_rows == 0:
            return
        # One write = one row group, so an abort keeps whole batches only.
        self._writer.write_table(table, row_group_size=table.num_rows)
        self.rows_written += table.num_rows
        self.row_groups += 1

    def close(self) -> None:
        """Write the footer and move the file to its final name (idempotent)."""
        if self.closed:
            return
        self.closed = True
        try:
            self._writer.close()
            _fsync_file(self.partial_path)
        except BaseException:
            # Never promote a file whose footer failed: it would be corrupt.
            _unlink_quietly(self.partial_path)
            raise
        os.replace(self.partial_path, self.path)
        _fsync_dir(os.path.dirname(self.path))

    def abort(self) -> None:
        """Keep what is complete: same as close(); row groups in flight are not written.

        Kept as its own name so call sites say why they stop.
        """
        self.close()

    def __enter__(self) -> ParquetStream:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        if exc_type is None:
            self.close()
            return False
        try:
            self.abort()
        except Exception as err:  # do not hide the original exception
            warnings.warn(f"could not finish {self.path}: {err}", RuntimeWarning, stacklevel=2)
        return False


def _unlink_quietly(path: str) -> None:
    """Remove ``path`` if it exists, ignoring errors (cleanup on a failure path)."""
    try:
        os.unlink(path)
    except OSError:
        pass


def markdown_table(head: list[str], rows) -> str:
    """A Markdown table of ``rows`` (lists of cells, shown with str) under ``head``."""
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def _read_umask() -> int:
    mask = os.umask(0)  # the only way to read it; set back at once, at import
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` via a fsynced temp file in the same folder."""
    path = os.fspath(path)
    parent = os.path.dirname(path) or "."
    os.makedirs(parent, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=parent, prefix=os.path.basename(path) + ".", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)  # mkstemp makes 0600; give the mode open() would
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        _unlink_quietly(tmp)
        raise
    _fsync_dir(parent)


def write_table_atomic(path: str | os.PathLike[str], table: pa.Table) -> None:
    """Atomically write a small table as one Parquet file."""
    buf = pa.BufferOutputStream()
    pq.write_table(table, buf, compression="zstd")
    write_bytes_atomic(path, buf.getvalue().to_pybytes())


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Atomically write UTF-8 text."""
    write_bytes_atomic(path, text.encode("utf-8"))


def _json_default(obj: Any) -> Any:
    # Runner results carry NumPy scalars and arrays; paths come from configs.
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (Path, os.PathLike)):
        return os.fspath(obj)
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    raise TypeError(f"object of type {type(obj).__name__} is not JSON serializable")


def write_json_atomic(path: str | os.PathLike[str], obj: Any, *, indent: int = 2) -> None:
    """Atomically write ``obj`` as JSON (NumPy values are converted)."""
    text = json.dumps(obj, indent=indent, default=_json_default, ensure_ascii=False)
    write_text_atomic(path, text + "\n")
