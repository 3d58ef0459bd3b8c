"""Chunk vectors computed elsewhere (a GPU job, a published embedding set), imported by
`litloop index build PATH... --embeddings FILE` instead of running the embedder on the CPU.

The file, `.npz` (numpy's `np.savez`):

    ids      strings, [n]: window ids `<chunk_id>@w<n>` (as tools/retrieval/dense.py names windows), or the
             chunk id alone for a chunk embedded as one window
    vectors  float32 (any float is accepted), [n, dim]
    model    a scalar string: the embedder's name, as the manifest records `embedder.name`
             (LITLOOP_EMBEDDER__MODEL, e.g. `bundled:all-MiniLM-L6-v2`)
    window_chars  optional scalar int: the window length the ids were cut with; checked when present

or `.jsonl`: a first line `{"model": ..., "dim": ...}` (optionally `"window_chars"`), then one
`{"id": ..., "vector": [...]}` per line.

`litloop index export-windows --index DIR --out windows.jsonl` writes the windows a build of
that index's chunks embeds, `{"id", "chunk_id", "text"}` a line, for such a job to embed.

A file is checked whole before a build writes anything (`load` and `check`): its model must be
the one the manifest will record, its dimension the embedder's (and the existing index's), every
vector finite and nonzero, every id once. Vectors are L2-normalised on load, as `Embedder.encode`
normalises its own, so cosine similarity stays a dot product.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from tools.retrieval.dense import Window


class VectorFileProblem(ValueError):
    """A vector file that cannot be used for this build; the message names the file and what to do."""


@dataclass
class VectorFile:
    path: Path
    model: str
    ids: list[str]
    vectors: np.ndarray  # [n, dim] float32, unit rows
    window_chars: int | None = None

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    def match(self, windows: Sequence[Window]) -> tuple[list[int], list[int]]:
        """For `windows` (window_id, chunk_id, paper_id, text) in order: the positions of those the
        file has a vector for, and the file rows of those vectors. A window is found by its id,
        or by its chunk's id when the chunk is that one window."""
        row = {i: n for n, i in enumerate(self.ids)}
        per_chunk: dict[str, int] = {}
        for _, cid, _, _ in windows:
            per_chunk[cid] = per_chunk.get(cid, 0) + 1
        at, rows = [], []
        for pos, (wid, cid, _, _) in enumerate(windows):
            r = row.get(wid)
            if r is None and per_chunk[cid] == 1:
                r = row.get(cid)
            if r is not None:
                at.append(pos)
                rows.append(r)
        return at, rows


def load(path: Path) -> VectorFile:
    """Read and validate a vector file (.npz or .jsonl); its rows come back unit length."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise VectorFileProblem(f"{path}: no such embeddings file")
    if path.suffix == ".npz":
        model, ids, vectors, window_chars = _read_npz(path)
    elif path.suffix == ".jsonl":
        model, ids, vectors, window_chars = _read_jsonl(path)
    else:
        raise VectorFileProblem(f"{path}: embeddings must be a .npz (ids, vectors, model) or a .jsonl file")
    if vectors.ndim != 2 or len(ids) != vectors.shape[0]:
        raise VectorFileProblem(
            f"{path}: {len(ids)} ids but vectors of shape {tuple(vectors.shape)}; "
            "expected vectors of shape [len(ids), dim]"
        )
    if len(set(ids)) != len(ids):
        dup = next(i for i, n in Counter(ids).items() if n > 1)
        raise VectorFileProblem(f"{path}: id {dup!r} appears more than once; give each window one vector")
    vectors = vectors.astype(np.float32)
    bad = ~np.isfinite(vectors).all(axis=1)
    norms = np.linalg.norm(vectors, axis=1)
    bad |= norms == 0
    if bad.any():
        raise VectorFileProblem(
            f"{path}: {int(bad.sum())} vector(s) are not finite or are all zeros "
            f"(first: id {ids[int(np.argmax(bad))]!r}); recompute them"
        )
    # the embedder's own vectors are unit length (normalize_embeddings=True): so are these
    vectors = vectors / norms[:, None]
    return VectorFile(path, model, ids, vectors, window_chars)


def check(
    vf: VectorFile, model: str, dim: int, window_chars: int, index_dim: int | None = None, index: Path | None = None
) -> None:
    """Fail unless `vf` holds vectors of the embedder `model` (`dim`-d) for windows of
    `window_chars` characters, and, for an add, of the existing index's dimension."""
    todo = (
        f"embed the windows (`litloop index export-windows`) with {model} ({dim}-d), "
        f"or set LITLOOP_EMBEDDER__MODEL to the embedder the file was made with"
    )
    if vf.model != model:
        raise VectorFileProblem(
            f"{vf.path}: vectors of model {vf.model!r} but this build embeds with {model!r}; {todo}"
        )
    if vf.dim != dim:
        raise VectorFileProblem(f"{vf.path}: {vf.dim}-d vectors but embedder {model!r} gives {dim}-d; {todo}")
    if index_dim is not None and vf.dim != index_dim:
        raise VectorFileProblem(
            f"{vf.path}: {vf.dim}-d vectors but index {index} holds {index_dim}-d ones; "
            "rebuild the index (`--rebuild`) or import vectors of its embedder"
        )
    if vf.window_chars is not None and vf.window_chars != window_chars:
        raise VectorFileProblem(
            f"{vf.path}: windows of {vf.window_chars} characters but "
            f"LITLOOP_EMBEDDER__WINDOW_CHARS is {window_chars}; export the windows "
            "again with this setting, or set it to the file's"
        )


def _read_npz(path: Path) -> tuple[str, list[str], np.ndarray, int | None]:
    try:
        with np.load(path, allow_pickle=False) as z:
            missing = {"ids", "vectors", "model"} - set(z.files)
            if missing:
                raise VectorFileProblem(
                    f"{path}: no array(s) {', '.join(sorted(missing))}; expected ids, vectors and model"
                )
            ids, vectors, model = z["ids"], z["vectors"], z["model"]
            window_chars = int(z["window_chars"]) if "window_chars" in z.files else None
    except ValueError as exc:  # pickled (object) arrays, a damaged file
        if isinstance(exc, VectorFileProblem):
            raise
        raise VectorFileProblem(
            f"{path}: cannot read ({exc}); save ids and model as string arrays "
            "(np.array(ids, dtype=str)), not Python objects"
        ) from None
    if ids.dtype.kind != "U" or model.dtype.kind != "U" or model.ndim != 0:
        raise VectorFileProblem(
            f"{path}: ids must be an array of strings and model one string "
            f"(found ids {ids.dtype}, model {model.dtype} of shape {model.shape})"
        )
    if vectors.dtype.kind != "f":
        raise VectorFileProblem(f"{path}: vectors must be floats, found {vectors.dtype}")
    return str(model), [str(i) for i in ids], vectors, window_chars


def _read_jsonl(path: Path) -> tuple[str, list[str], np.ndarray, int | None]:
    from tools.jsonl import JsonlError, iter_jsonl

    ids, rows, head = [], [], None
    try:
        for line, rec in iter_jsonl(path):
            if head is None:
                if "model" not in rec or "dim" not in rec:
                    raise VectorFileProblem(f'{path} line {line}: the first line must be {{"model": ..., "dim": ...}}')
                head = rec
                continue
            vec = rec.get("vector")
            if not isinstance(rec.get("id"), str) or not isinstance(vec, list) or len(vec) != head["dim"]:
                raise VectorFileProblem(
                    f'{path} line {line}: expected {{"id": str, "vector": [{head["dim"]} numbers]}}'
                )
            ids.append(rec["id"])
            rows.append(vec)
    except JsonlError as exc:
        raise VectorFileProblem(str(exc)) from None
    if head is None:
        raise VectorFileProblem(f'{path}: empty; the first line must be {{"model": ..., "dim": ...}}')
    try:
        vectors = np.asarray(rows, dtype=np.float32).reshape(len(rows), int(head["dim"]))
    except (TypeError, ValueError) as exc:
        raise VectorFileProblem(f"{path}: vectors must be lists of numbers ({exc})") from None
    wc = head.get("window_chars")
    return str(head["model"]), ids, vectors, int(wc) if wc is not None else None


def export_input_windows(paths: Any, settings: Any, out: Path) -> tuple[int, list[str]]:
    """Write the windows a build of the papers under `paths` would embed, with no index: they are
    parsed and chunked as a build does (same chunk ids, same `window_chars`), so a build of the
    same input imports their vectors. The number written and the input's problems."""
    from tools.ingest.loader import load_documents
    from tools.jsonl import write_jsonl
    from tools.retrieval.dense import windows_for

    ing = settings.ingest
    loaded = load_documents(paths, max_chunks=ing.max_chunks_per_paper, workers=ing.workers)
    chunks = ((c.chunk_id, c.paper_id, c.text) for cs in loaded.chunks_of(ing.max_chunks_per_paper) for c in cs)
    windows = windows_for(chunks, settings.embedder.window_chars)
    write_jsonl(Path(out), ({"id": w.window_id, "chunk_id": w.chunk_id, "text": w.text} for w in windows))
    return len(windows), loaded.problems


def export_windows(index: Any, out: Path) -> int:
    """Write every window of `index`'s chunks (the windows a build of them embeds), as
    `{"id", "chunk_id", "text"}` lines; the number written."""
    from tools.jsonl import write_jsonl
    from tools.retrieval.dense import windows_for

    windows = windows_for(
        ((c.chunk_id, c.paper_id, c.text) for c in index.chunks), index.manifest.embedder.window_chars
    )
    write_jsonl(Path(out), ({"id": w.window_id, "chunk_id": w.chunk_id, "text": w.text} for w in windows))
    return len(windows)
