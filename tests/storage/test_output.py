"""Crash-safe Parquet streams and atomic JSON/text writes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kraftwalk.storage.output import ParquetStream, write_json_atomic, write_text_atomic

SCHEMA = pa.schema(
    [
        ("walk", pa.int64()),
        ("step", pa.int32()),
        ("invariant", pa.string()),
        ("rate", pa.float64()),
    ]
)


def batch(start: int, n: int) -> dict[str, np.ndarray]:
    walk = np.arange(start, start + n, dtype=np.int64)
    return {
        "walk": walk,
        "step": (walk % 7).astype(np.int64),  # cast to the schema's int32 on write
        "invariant": np.array(["ElectionSafety"] * n, dtype=object),
        "rate": walk * 0.5,
    }


def no_leftovers(folder: Path) -> bool:
    return not any(p.name.endswith((".partial", ".tmp")) for p in folder.iterdir())


def test_stream_writes_row_groups(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "walks.parquet"  # parent folders are created
    with ParquetStream(path, SCHEMA) as stream:
        stream.write(batch(0, 100))
        stream.write(batch(100, 0))  # empty: skipped, no empty row group
        stream.write(batch(100, 50))
        assert not path.exists(), "final name must not exist before close"
        assert Path(str(path) + ".partial").exists()
    assert (stream.rows_written, stream.row_groups) == (150, 2)

    meta = pq.ParquetFile(path).metadata
    assert meta.num_row_groups == 2 and meta.num_rows == 150
    assert meta.row_group(0).column(0).compression == "ZSTD"
    table = pq.read_table(path)
    assert table.schema.equals(SCHEMA)
    assert table.column("walk").to_pylist() == list(range(150))
    assert no_leftovers(path.parent)


def test_readers_read_output_directly(tmp_path: Path) -> None:
    path = tmp_path / "violations.parquet"
    with ParquetStream(path, SCHEMA) as stream:
        stream.write(batch(0, 30))
        stream.write(batch(30, 12))
    assert duckdb.sql(f"select count(*) from '{path}'").fetchall() == [(42,)]
    assert duckdb.sql(f"select sum(walk) from '{path}'").fetchall() == [(sum(range(42)),)]
    df = pd.read_parquet(path)
    assert len(df) == 42 and list(df.columns) == SCHEMA.names
    pf = pl.read_parquet(path)
    assert pf.height == 42 and pf["step"].dtype == pl.Int32


def test_accepts_tables_batches_and_reordered_dicts(tmp_path: Path) -> None:
    path = tmp_path / "mixed.parquet"
    with ParquetStream(path, SCHEMA) as stream:
        stream.write(pa.table(batch(0, 3)).select(["rate", "invariant", "step", "walk"]))
        stream.write(pa.RecordBatch.from_pydict(batch(3, 2)))
        data = batch(5, 4)
        stream.write({k: data[k] for k in reversed(SCHEMA.names)})
    assert pq.read_table(path).column("walk").to_pylist() == list(range(9))


def test_column_mismatch_is_rejected_and_stream_survives(tmp_path: Path) -> None:
    path = tmp_path / "x.parquet"
    with ParquetStream(path, SCHEMA) as stream:
        bad = batch(0, 2)
        del bad["rate"]
        bad["oops"] = np.zeros(2)
        with pytest.raises(ValueError, match=r"missing \['rate'\], extra \['oops'\]"):
            stream.write(bad)
        stream.write(batch(0, 2))
    assert pq.read_metadata(path).num_rows == 2


@pytest.mark.parametrize("exc_type", [RuntimeError, KeyboardInterrupt])
def test_abort_on_exception_keeps_complete_row_groups(tmp_path: Path, exc_type: type[BaseException]) -> None:
    path = tmp_path / "walks.parquet"
    with pytest.raises(exc_type):
        with ParquetStream(path, SCHEMA) as stream:
            stream.write(batch(0, 10))
            stream.write(batch(10, 10))
            raise exc_type()
    meta = pq.read_metadata(path)
    assert (meta.num_row_groups, meta.num_rows) == (2, 20)
    assert duckdb.sql(f"select count(*) from '{path}'").fetchall() == [(20,)]
    assert no_leftovers(tmp_path)


def test_abort_without_rows_gives_valid_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.parquet"
    stream = ParquetStream(path, SCHEMA)
    stream.abort()
    stream.abort()  # idempotent
    table = pq.read_table(path)
    assert table.num_rows == 0 and table.schema.equals(SCHEMA)
    assert pl.read_parquet(path).height == 0
    with pytest.raises(ValueError, match="closed"):
        stream.write(batch(0, 1))


def test_metadata_is_stored(tmp_path: Path) -> None:
    path = tmp_path / "m.parquet"
    with ParquetStream(path, SCHEMA, metadata={"kraftwalk.run_id": "r1"}) as stream:
        stream.write(batch(0, 1))
    assert pq.read_schema(path).metadata[b"kraftwalk.run_id"] == b"r1"


class _BrokenWriter:
    def close(self) -> None:
        raise OSError("disk full")


def test_failed_footer_never_reaches_final_name(tmp_path: Path) -> None:
    path = tmp_path / "broken.parquet"
    stream = ParquetStream(path, SCHEMA)
    stream.write(batch(0, 5))
    real = stream._writer
    stream._writer = _BrokenWriter()  # type: ignore[assignment]
    with pytest.raises(OSError, match="disk full"):
        stream.close()
    real.close()
    assert not path.exists()
    assert no_leftovers(tmp_path)


def test_failed_footer_during_abort_keeps_original_exception(tmp_path: Path) -> None:
    path = tmp_path / "broken.parquet"
    with pytest.warns(RuntimeWarning, match="disk full"):
        with pytest.raises(KeyboardInterrupt):
            with ParquetStream(path, SCHEMA) as stream:
                real = stream._writer
                stream._writer = _BrokenWriter()  # type: ignore[assignment]
                raise KeyboardInterrupt
    real.close()
    assert not path.exists() and no_leftovers(tmp_path)


def _ctrl_c_as_in_a_terminal() -> None:
    """The child starts with SIGINT at its default and unblocked, as a command started
    from a shell has it, whatever this test process inherited or a library earlier in
    the session left: a child that inherits SIGINT ignored or blocked never sees it
    (Python installs its KeyboardInterrupt handler only over the default)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])


@pytest.mark.skipif(sys.platform == "win32", reason="uses SIGINT")
def test_ctrl_c_in_a_real_process_keeps_finished_row_groups(tmp_path: Path) -> None:
    path = tmp_path / "walks.parquet"
    script = textwrap.dedent(
        f"""
        import sys, time
        import pyarrow as pa
        from kraftwalk.storage.output import ParquetStream
        schema = pa.schema([("walk", pa.int64())])
        with ParquetStream({str(path)!r}, schema) as stream:
            for i in range(1000):
                stream.write({{"walk": list(range(i * 100, i * 100 + 100))}})
                if i == 2:
                    print("ready", flush=True)
                time.sleep(0.01)
        """
    )
    paths = [str(Path(__file__).resolve().parents[2]), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=env, preexec_fn=_ctrl_c_as_in_a_terminal,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0 and "KeyboardInterrupt" in err, (proc.returncode, err)
    meta = pq.read_metadata(path)
    assert meta.num_row_groups >= 3
    assert meta.num_rows == 100 * meta.num_row_groups  # only whole row groups
    assert no_leftovers(tmp_path)


def test_write_json_atomic(tmp_path: Path) -> None:
    path = tmp_path / "out" / "summary.json"
    obj = {"walks": np.int64(3), "rate": np.float32(1.5), "ok": np.bool_(True),
           "counts": np.arange(3), "where": tmp_path, "name": "é"}
    write_json_atomic(path, obj)
    assert json.loads(path.read_text(encoding="utf-8")) == {
        "walks": 3, "rate": 1.5, "ok": True, "counts": [0, 1, 2], "where": str(tmp_path), "name": "é"}
    write_json_atomic(path, {"v": 2})  # replaces
    assert json.loads(path.read_text()) == {"v": 2}
    with pytest.raises(TypeError):
        write_json_atomic(path, {"bad": object()})
    assert json.loads(path.read_text()) == {"v": 2}, "a failed write leaves the old file"
    assert no_leftovers(path.parent)


def test_write_text_atomic(tmp_path: Path) -> None:
    path = tmp_path / "a" / "config.toml"
    write_text_atomic(path, "voters = 3\n")
    assert path.read_text() == "voters = 3\n"
    write_text_atomic(path, "voters = 5\n")
    assert path.read_text() == "voters = 5\n"
    assert no_leftovers(path.parent)


def test_atomic_files_get_the_mode_a_plain_open_gives(tmp_path):
    import os

    from kraftwalk.storage.output import write_text_atomic

    write_text_atomic(tmp_path / "a.txt", "x")
    (tmp_path / "b.txt").write_text("x")
    assert os.stat(tmp_path / "a.txt").st_mode == os.stat(tmp_path / "b.txt").st_mode
