"""`kraftwalk swarm --backend dask` on a real Dask cluster: a scheduler and two workers
started as separate processes on loopback, as `dask scheduler` and `dask worker` would
be on a cluster's machines. The run, pointed at the cluster by DASK_SCHEDULER_ADDRESS,
writes the same walks and violations as a local run with one worker, and counts the
cluster's cores."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import kraftwalk
from kraftwalk.storage import rundir

pytest.importorskip("distributed")

ARGS = ["--walks", "2000", "--depth", "200", "--seed", "7", "--mutation", "double-vote",
        "--chunk-walks", "128", "--flush-seconds", "0"]
WORKERS = 2
RUN_TIMEOUT = 180


def environment() -> dict[str, str]:
    """This process's environment, with the folder this kraftwalk was imported from
    first on PYTHONPATH: every process started here imports the same kraftwalk."""
    env = {k: v for k, v in os.environ.items() if k != "DASK_SCHEDULER_ADDRESS"}
    here = os.path.dirname(os.path.dirname(kraftwalk.__file__))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (here, env.get("PYTHONPATH")) if p)
    return env


def start(args: list[str], log: Path, cwd: Path) -> subprocess.Popen:
    """A process in a new process group (a worker's nanny and the worker it starts
    are stopped together), its output in ``log``."""
    with open(log, "wb") as f:
        return subprocess.Popen([sys.executable, "-m", *args], stdout=f,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                cwd=cwd, env=environment(), start_new_session=True)


def stop(proc: subprocess.Popen, grace: float = 15) -> None:
    """SIGTERM to the process group, SIGKILL to whatever of it is left after ``grace``
    seconds."""
    try:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(grace)
            except subprocess.TimeoutExpired:
                pass
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(10)


def tail(log: Path) -> str:
    return log.read_text(errors="replace")[-3000:] if log.exists() else ""


@pytest.fixture
def cluster(tmp_path):
    """A Dask scheduler and WORKERS single-threaded workers on 127.0.0.1; yields the
    scheduler file, and stops them all at the end."""
    from distributed import Client

    here = tmp_path / "cluster"
    here.mkdir()
    sched_file = here / "scheduler.json"
    procs = []
    try:
        procs.append(start(["distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                            "--port", "0", "--scheduler-file", str(sched_file),
                            "--no-dashboard"], here / "scheduler.log", here))
        deadline = time.monotonic() + 60
        while not sched_file.exists():
            assert procs[0].poll() is None, tail(here / "scheduler.log")
            assert time.monotonic() < deadline, "no scheduler file in 60 s"
            time.sleep(0.1)
        for i in range(WORKERS):
            procs.append(start(["distributed.cli.dask_worker", "--scheduler-file",
                                str(sched_file), "--host", "127.0.0.1", "--nthreads", "1",
                                "--nworkers", "1", "--no-dashboard", "--death-timeout", "60",
                                "--local-directory", str(here / f"worker{i}")],
                               here / f"worker{i}.log", here))
        with Client(scheduler_file=str(sched_file), timeout=60) as client:
            try:
                client.wait_for_workers(WORKERS, timeout=60)
            except TimeoutError:
                pytest.fail("workers did not register in 60 s:\n"
                            + "\n".join(tail(here / f"worker{i}.log") for i in range(WORKERS)))
        yield sched_file
    finally:
        for proc in reversed(procs):
            stop(proc)


def swarm(out: Path, *extra: str, env: dict[str, str] | None = None) -> dict:
    proc = subprocess.run([sys.executable, "-m", "kraftwalk.cli", "swarm", *ARGS, *extra,
                           "--out", str(out)], capture_output=True, text=True,
                          env=env or environment(), cwd=out.parent, timeout=RUN_TIMEOUT)
    assert proc.returncode == 12, proc.stdout[-3000:] + proc.stderr[-3000:]  # double-vote found
    return json.loads((out / rundir.RUN_JSON).read_text())


def test_a_run_on_a_dask_cluster_gives_the_same_walks_as_a_local_run(tmp_path, cluster):
    from distributed import Client

    def loaded():
        """In a worker: which kraftwalk it imports, and whether it ran walks."""
        import sys

        import kraftwalk
        import kraftwalk.kernels

        return (kraftwalk.__file__, kraftwalk.kernels.__file__,
                "kraftwalk.kernels.drivers.walk" in sys.modules)

    with Client(scheduler_file=str(cluster), timeout=60) as client:
        address = client.scheduler.address
        workers = client.scheduler_info()["workers"]
        assert address.startswith("tcp://127.0.0.1:")
        assert len(workers) == WORKERS
        assert all(w.startswith("tcp://127.0.0.1:") for w in workers)
        import kraftwalk.kernels

        same = (kraftwalk.__file__, kraftwalk.kernels.__file__, False)
        assert list(client.run(loaded).values()) == [same] * WORKERS

        local = swarm(tmp_path / "local", "--workers", "1")
        env = environment()
        env["DASK_SCHEDULER_ADDRESS"] = address
        on_cluster = swarm(tmp_path / "dask", "--backend", "dask", env=env)

        # every worker process ran walks
        assert [ran for _, _, ran in client.run(loaded).values()] == [True] * WORKERS

    for run in (local, on_cluster):
        assert run["status"] == "finished" and run["walks"] == 2000
    assert on_cluster["config"]["backend"] == "dask"
    assert on_cluster["workers"] == WORKERS  # the cluster's cores, for steps/s per core
    walks = rundir.read_dataset(tmp_path / "local", rundir.WALKS)
    assert walks.num_rows == 2000
    assert walks.equals(rundir.read_dataset(tmp_path / "dask", rundir.WALKS))
    viol = rundir.read_dataset(tmp_path / "local", rundir.VIOLATIONS).drop_columns(["run_id"])
    assert viol.num_rows > 0
    assert viol.equals(rundir.read_dataset(tmp_path / "dask", rundir.VIOLATIONS)
                       .drop_columns(["run_id"]))


ELECT_ARGS = ["--voters", "3", "--voters", "5", "--pre-vote", "on", "--walks", "600",
              "--scenario", "random-faults", "--mutation", "no-check-quorum", "--seed", "4",
              "--flush-seconds", "0"]


def elect(out: Path, *extra: str, env: dict[str, str] | None = None) -> dict:
    proc = subprocess.run([sys.executable, "-m", "kraftwalk.cli", "elect", *ELECT_ARGS,
                           *extra, "--out", str(out)], capture_output=True, text=True,
                          env=env or environment(), cwd=out.parent, timeout=RUN_TIMEOUT)
    assert proc.returncode == 13, proc.stdout[-3000:] + proc.stderr[-3000:]  # liveness bug
    return json.loads((out / rundir.RUN_JSON).read_text())


def test_timed_walks_on_a_dask_cluster_are_the_local_ones(tmp_path, cluster):
    """`kraftwalk elect --backend dask`: the same machinery as the swarm's, so the same
    rows and violations as one local worker, and the cluster's cores counted."""
    from distributed import Client

    from kraftwalk.storage import elect_folder as ef

    with Client(scheduler_file=str(cluster), timeout=60) as client:
        env = environment()
        env["DASK_SCHEDULER_ADDRESS"] = client.scheduler.address
        local = elect(tmp_path / "local", "--workers", "1")
        on_cluster = elect(tmp_path / "dask", "--backend", "dask", env=env)
    assert on_cluster["backend"] == "dask" and on_cluster["workers"] == WORKERS
    assert local["summary"] == on_cluster["summary"]
    for dataset in ("walks", "violations"):
        a, b = (ef.read_cells(tmp_path / r, dataset) for r in ("local", "dask"))
        assert a.num_rows > 0 and a.equals(b), dataset


def test_timed_walks_on_ray_are_the_local_ones(tmp_path):
    """`kraftwalk elect --backend ray` (a local Ray cluster, started by the run as
    ``ray.init`` does without $RAY_ADDRESS): the same rows and violations as one local
    worker. Ray is not in the test extra; CI installs it for this and the swarm's."""
    pytest.importorskip("ray.util.joblib")
    from kraftwalk.storage import elect_folder as ef

    env = {k: v for k, v in environment().items() if k != "RAY_ADDRESS"}
    local = elect(tmp_path / "local", "--workers", "1", env=env)
    on_ray = elect(tmp_path / "ray", "--backend", "ray", "--workers", "2", env=env)
    assert on_ray["backend"] == "ray" and on_ray["workers"] >= 1
    assert local["summary"] == on_ray["summary"]
    for dataset in ("walks", "violations"):
        a, b = (ef.read_cells(tmp_path / r, dataset) for r in ("local", "ray"))
        assert a.num_rows > 0 and a.equals(b), dataset
