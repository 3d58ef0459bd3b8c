"""Builds and adds (`litloop index build`): the new papers as one new segment, then a new
version naming the live version's segments and the new one, switched to atomically; the
clean-up of what nothing uses any more follows, under the build lock."""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tools.base import CHUNK_KINDS, Chunk, Document, Paper
from tools.citations.model import Context
from tools.index.layout import (
    BM25_B,
    BM25_EPSILON,
    BM25_K1,
    FORMAT_VERSION,
    GRAPH_FILE,
    PAPERS_FILE,
    Progress,
    _now,
    _progress,
)
from tools.index.manifest import EmbedderRecord, Manifest, write_manifest
from tools.index.segment import (
    _dense_store,
    _embed_windows,
    _paper_vectors,
    write_segment,
)
from tools.index.versions import (
    _build_lock,
    _collect,
    _remove_leftovers,
    _stage_version,
)
from tools.index.view import IndexView, open_index
from tools.ingest import INGEST_VERSION
from tools.retrieval.text import tokenizer_for
from tools.settings import TOKENIZER_ALIASES, ToolSettings

if TYPE_CHECKING:
    from tools.index.manifest import SegmentRecord
    from tools.retrieval.bm25_segments import Postings


@dataclass
class BuildReport:
    index: Path
    papers_added: int = 0
    chunks_added: int = 0
    windows_embedded: int = 0  # by the embedder in this build
    windows_imported: int = 0  # taken from an --embeddings file
    vectors_ignored: int = 0  # rows of that file for no window this build embeds
    references_resolved: int = 0
    contexts_added: int = 0  # citation contexts of the new papers
    already_indexed: int = 0  # papers of the input the index already holds: skipped, not problems
    # words that had lost a ligature in extraction ("speci c") and were repaired, and in how many papers
    ligature_words: int = 0
    ligature_papers: int = 0
    # PDFs whose reader kept too little of their text (tools/ingest/pdf/accounting.py): each a
    # {"paper_id", "source", "share", "words", "lost_pages", "message"}; warnings, not problems
    text_losses: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    totals: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": str(self.index),
            "papers_added": self.papers_added,
            "chunks_added": self.chunks_added,
            "windows_embedded": self.windows_embedded,
            "windows_imported": self.windows_imported,
            "vectors_ignored": self.vectors_ignored,
            "references_resolved": self.references_resolved,
            "contexts_added": self.contexts_added,
            "already_indexed": self.already_indexed,
            "ligatures_repaired": {"papers": self.ligature_papers, "words": self.ligature_words},
            "text_losses": self.text_losses,
            "problems": self.problems,
            "seconds": {k: round(v, 2) for k, v in self.seconds.items()},
            "totals": self.totals,
        }


class BuildFailed(RuntimeError):
    def __init__(self, message: str, problems: Sequence[str] = ()):
        super().__init__(message)
        self.problems = list(problems)


def build_index(
    inputs: Iterable[Path],
    root: Path,
    settings: ToolSettings,
    *,
    rebuild: bool = False,
    strict: bool = False,
    progress: Progress = False,
    embeddings: Path | None = None,
    loader: Callable[[Sequence[Path], set[str] | None], tuple[Any, Any]] | None = None,
) -> BuildReport:
    """Index the papers under `inputs` into `root`, adding to what is there unless `rebuild`.

    Already-indexed papers are not re-embedded: the new version names the live one's segments
    and only new chunks are embedded. Input papers the index already holds are counted in
    `already_indexed`, not as problems, so `strict` (fail on any problem, writing nothing) holds
    for rerunning the same input.

    `embeddings` names a file of window vectors computed elsewhere (tools/index/vector_file.py): the
    windows it has are imported, the rest embedded; a file that does not fit this build fails it
    before anything is written.

    `loader(inputs, known_ids)` replaces the local parse (tools.ingest.loader.load_documents) with
    another engine's (tools/index/ray_build.py): it returns the same `LoadResult` and, optionally, a
    `VectorFile` of the windows it embedded, which the build imports as it would `embeddings`.
    """
    from tools.ingest.loader import load_documents

    root = Path(root).expanduser()
    report = BuildReport(index=root)
    imported = _load_imported(embeddings, settings) if embeddings is not None else None
    with _build_lock(root):
        _remove_leftovers(root, settings.dense.url)
        old = None if rebuild or not (root / "CURRENT").exists() else open_index(root, settings)
        if imported is not None and old is not None:
            _check_imported(imported, settings, old)
        t0 = time.perf_counter()
        known = set(old.papers) if old else None
        if loader is not None:
            loaded, computed = loader(list(inputs), known)
            imported = computed if computed is not None else imported
        else:
            with _progress(progress, "reading", unit="file") as bar:
                loaded = load_documents(
                    inputs,
                    known,
                    on_file=lambda _: bar.update(1),
                    max_chunks=settings.ingest.max_chunks_per_paper,
                    workers=settings.ingest.workers,
                )
        report.problems = loaded.problems
        report.already_indexed = len(loaded.already_indexed)
        report.seconds["parse"] = time.perf_counter() - t0
        if strict and loaded.problems:
            raise BuildFailed(
                f"{len(loaded.problems)} input problem(s) and --strict given; nothing written", loaded.problems
            )
        if not loaded.documents and old is not None:
            report.totals = old.manifest.counts
            old.close()
            return report
        if not loaded.documents:
            raise BuildFailed("no papers could be read from the input; nothing written", loaded.problems)
        try:
            _stage_version(
                root, settings, lambda stage: _write_version(stage, old, loaded, settings, report, progress, imported)
            )
        finally:
            if old is not None:
                old.close()
        _collect(root, settings.dense.url)
    return report


def _write_version(
    stage: Path,
    old: IndexView | None,
    loaded: Any,
    settings: ToolSettings,
    report: BuildReport,
    progress: Progress,
    imported: Any = None,
) -> None:
    """A build's version: one new segment with the new papers' chunks, vectors and postings,
    after the live version's segments (none for a rebuild); all papers, re-resolved; the
    corpus-wide BM25 statistics; the citation graph."""
    from graph_store.citation_graph import COUPLING_MIN_SHARED, CitationGraph
    from tools.citations.resolve import citation_targets
    from tools.citations.store import CITATIONS_FILE, write_citations
    from tools.index.store import extend_papers, write_papers
    from tools.ingest.resolve import resolve_references
    from tools.retrieval.bm25_segments import Stats

    docs = loaded.documents
    old_papers: list[Paper] = list(old.papers.values()) if old else []
    new_papers = [d.paper for d in docs]
    # Re-resolve every bibliography against the grown corpus: an old full-text paper may cite
    # a paper that only arrives now.
    papers, report.references_resolved = resolve_references(old_papers + new_papers)
    t = time.perf_counter()
    chunked = loaded.chunks_of(settings.ingest.max_chunks_per_paper)
    new_chunks = [c for cs in chunked for c in cs]
    report.seconds["chunk"] = time.perf_counter() - t
    t = time.perf_counter()
    contexts = _contexts(docs, chunked, progress)
    report.seconds["contexts"] = time.perf_counter() - t
    # an add tokenises the new papers as the index was built (its manifest); a new index, as the setting says
    tokenizer = old.manifest.tokenizer if old else TOKENIZER_ALIASES[settings.retrieval.tokenizer]
    assert tokenizer is not None  # opening `old` checked it is a known one

    segment, chunk_postings, paper_postings, dim, paper_dim = _write_new_segment(
        stage.parent, old, new_chunks, new_papers, settings, report, progress, imported, tokenizer, contexts
    )

    t = time.perf_counter()
    n_old = len(old.chunks) if old else 0
    n_old_papers = len(old_papers)
    # resolve_references returns the same record where nothing resolved anew
    changed = [(row, p) for row, (was, p) in enumerate(zip(old_papers, papers, strict=False)) if p is not was]
    ranges: dict[str, tuple[int, int]] = {}
    at = n_old
    for group in _group(new_chunks, new_papers):
        if group:
            ranges[group[0].paper_id] = (at, len(group))
        at += len(group)
    added = ((p, *ranges.get(p.paper_id, (at, 0))) for p in papers[n_old_papers:])
    if old:  # the old rows are copied, not written again: an add costs what it adds
        extend_papers(old.version_dir / PAPERS_FILE, stage / PAPERS_FILE, changed, added)
    else:
        write_papers(stage / PAPERS_FILE, added)
    report.seconds["papers"] = time.perf_counter() - t
    t = time.perf_counter()
    bm25_meta: dict[str, Any] = {"k1": BM25_K1, "b": BM25_B, "epsilon": BM25_EPSILON}
    for name, postings in (("chunk_bm25", chunk_postings), ("paper_bm25", paper_postings)):
        base = Stats.load(old.version_dir, name, old.manifest.bm25[name]) if old else Stats.empty()
        bm25_meta[name] = base.add(postings).save(stage, name)
    report.seconds["bm25"] += time.perf_counter() - t

    t = time.perf_counter()
    graph = CitationGraph.from_papers(papers)
    graph.save(stage / GRAPH_FILE)
    targets, references = citation_targets(papers)
    write_citations(stage / CITATIONS_FILE, targets, references)
    report.seconds["graph"] = time.perf_counter() - t
    report.contexts_added = len(contexts)
    t = time.perf_counter()
    before = old.manifest.counts.get("coupling_pairs") if old else None
    if isinstance(before, int):
        coupling = graph.coupling_edge_count_grown(
            before,
            [p.paper_id for p in new_papers],
            {old_papers[row].paper_id: old_papers[row].references for row, _ in changed},
        )
    else:
        coupling = graph.coupling_edge_count(min_shared=COUPLING_MIN_SHARED)
    report.seconds["coupling"] = time.perf_counter() - t

    report.papers_added = len(new_papers)
    report.chunks_added = len(new_chunks)
    report.ligature_words = sum(d.ligatures_repaired for d in docs)
    report.ligature_papers = sum(1 for d in docs if d.ligatures_repaired)
    was = (old.manifest.counts.get("ligatures_repaired") if old else None) or {}
    report.text_losses = text_losses(docs)
    lost_before = list((old.manifest.counts.get("text_losses") if old else None) or [])
    by_kind = Counter(old.manifest.counts["chunks_by_kind"] if old else {})
    by_kind.update(c.kind for c in new_chunks)
    counts = {
        "papers": len(papers),
        "chunks": n_old + len(new_chunks),
        "chunks_by_kind": {k: by_kind.get(k, 0) for k in CHUNK_KINDS},
        "citation_edges": graph.num_edges,
        "coupling_pairs": coupling,
        "dense_windows": (
            (old.manifest.counts["dense_windows"] if old else 0) + report.windows_embedded + report.windows_imported
        ),
        **_context_counts(old, len(contexts), len(references)),
        "ligatures_repaired": {
            "papers": was.get("papers", 0) + report.ligature_papers,
            "words": was.get("words", 0) + report.ligature_words,
        },
        # every PDF of the index whose reader kept too little of its text, kept with the index
        "text_losses": lost_before + [{k: v for k, v in x.items() if k != "message"} for x in report.text_losses],
    }
    report.totals = counts
    now = _now()
    e = settings.embedder
    write_manifest(
        stage,
        Manifest(
            format_version=FORMAT_VERSION,
            created=old.manifest.created if old else now,
            updated=now,
            embedder=EmbedderRecord(name=e.model, dim=dim, window_chars=e.window_chars, backend=e.backend),
            paper_embedder=EmbedderRecord(name=e.paper_model or e.model, dim=paper_dim),
            tokenizer=tokenizer,
            bm25=bm25_meta,
            corpus_fingerprint=_fingerprint(new_chunks, old.manifest.corpus_fingerprint if old else ""),
            # the oldest ingestion that cut papers kept here (an add keeps the old papers' chunks)
            ingest_version=min(old.manifest.ingest_version, INGEST_VERSION) if old else INGEST_VERSION,
            counts=counts,
            sources=sorted({p.source for p in papers if p.source}),
            segments=(list(old.manifest.segments) if old else []) + [segment],
        ),
    )


def text_losses(docs: Iterable[Document]) -> list[dict[str, Any]]:
    """The documents whose reader kept less of their text than it should (a PDF's text account
    below its thresholds), as the build reports them."""
    out = []
    for d in docs:
        account = d.text_account
        if account is None:
            continue
        message = account.problem(f"{d.paper.source or d.paper.paper_id} ({d.paper.paper_id})")
        if message:
            out.append(
                {"paper_id": d.paper.paper_id, "source": d.paper.source, **account.to_dict(), "message": message}
            )
    return out


def _write_new_segment(
    root: Path,
    old: IndexView | None,
    chunks: list[Chunk],
    papers: list[Paper],
    settings: ToolSettings,
    report: BuildReport,
    progress: Progress,
    imported: Any = None,
    tokenizer: str = TOKENIZER_ALIASES["plain"],
    contexts: list[Context] | None = None,
) -> tuple[SegmentRecord, Postings, Postings, int, int]:
    """The build's segment: its chunks' and papers' postings (tokenised with `tokenizer`, the name
    the manifest records), its windows embedded (or imported) into its dense store, its papers' vectors. Returns the record, the two postings and the
    dimensions of the window and paper vectors."""
    from tools.ingest.plan import settings_embedder
    from tools.retrieval.bm25_segments import Postings
    from tools.retrieval.dense import windows_for

    t = time.perf_counter()
    tokenize = tokenizer_for(tokenizer)
    chunk_postings = Postings.build(tokenize(c.text) for c in chunks)
    paper_postings = Postings.build(tokenize("\n".join(c.text for c in cs)) for cs in _group(chunks, papers))
    report.seconds["bm25"] = time.perf_counter() - t
    emb = settings_embedder(settings)
    done: dict[str, Any] = {}

    def fill(_stage: Path, dense: Any) -> int:
        windows = windows_for(((c.chunk_id, c.paper_id, c.text) for c in chunks), settings.embedder.window_chars)
        vectors = _embed_windows(windows, emb, imported, settings, report, progress)
        dense.add([(w.window_id, w.chunk_id, w.paper_id) for w in windows], vectors)
        done["paper_vecs"] = _paper_vectors(papers, chunks, windows, vectors, settings, progress)
        return len(windows)

    last = old.manifest.segments[-1] if old else None
    record = write_segment(
        root,
        store_for=lambda name: _dense_store(root, name, last, settings),
        chunks=chunks,
        postings=(chunk_postings, paper_postings),
        fill=fill,
        paper_vectors=lambda: done["paper_vecs"],
        papers=len(papers),
        seconds=report.seconds,
        contexts=contexts if contexts is not None else [],
    )
    return record, chunk_postings, paper_postings, emb.dim, int(done["paper_vecs"].shape[1])


def _contexts(docs: Sequence[Document], chunked: Sequence[Sequence[Chunk]], progress: Progress) -> list[Context]:
    """The citation contexts of the new papers, in paper order (tools/citations/extract.py)."""
    from tools.citations.extract import paper_contexts

    out: list[Context] = []
    with _progress(progress, "citation contexts", total=len(docs), unit="paper") as bar:
        for doc, chunks in zip(docs, chunked, strict=True):
            out.extend(paper_contexts(doc, chunks))
            bar.update(1)
    return out


def _context_counts(old: IndexView | None, added: int, references: int) -> dict[str, int]:
    """The manifest's counts of contexts: the live version's and the new ones, and how many papers
    were indexed before litloop recorded contexts (an index of then has no `contexts` count)."""
    before = old.manifest.counts if old else {}
    recorded = "contexts" in before or old is None
    return {
        "contexts": (before.get("contexts", 0) if recorded else 0) + added,
        "references": references,
        "papers_without_contexts": before.get("papers_without_contexts", 0) if recorded else before.get("papers", 0),
    }


def _load_imported(path: Path, settings: ToolSettings) -> Any:
    """The --embeddings file, read and checked against this build's embedder (before the build
    lock: a file that does not fit fails the build before it touches the index)."""
    from tools.index import vector_file
    from tools.ingest.plan import settings_embedder

    e = settings.embedder
    try:
        vf = vector_file.load(path)
        vector_file.check(vf, e.model, settings_embedder(settings).dim, e.window_chars)
    except vector_file.VectorFileProblem as exc:
        raise BuildFailed(f"{exc}; nothing written") from None
    return vf


def _check_imported(vf: Any, settings: ToolSettings, old: IndexView) -> None:
    """An add's --embeddings file against the index it adds to (its vectors' dimension)."""
    from tools.index import vector_file

    e = settings.embedder
    try:
        vector_file.check(vf, e.model, vf.dim, e.window_chars, old.manifest.embedder.dim, old.root)
    except vector_file.VectorFileProblem as exc:
        old.close()
        raise BuildFailed(f"{exc}; nothing written") from None


def _group(chunks: list[Chunk], papers: list[Paper]) -> list[list[Chunk]]:
    by_paper: dict[str, list[Chunk]] = {}
    for c in chunks:
        by_paper.setdefault(c.paper_id, []).append(c)
    return [by_paper.get(p.paper_id, []) for p in papers]


def _fingerprint(chunks: Iterable[Chunk], previous: str = "") -> str:
    """A digest of the chunk ids and texts, chained onto the previous version's: it changes with
    every add, and the same builds in the same order give the same fingerprint."""
    h = hashlib.sha256(previous.encode())
    for c in chunks:
        h.update(c.chunk_id.encode())
        h.update(hashlib.sha1(c.text.encode()).digest())
    return h.hexdigest()[:16]
