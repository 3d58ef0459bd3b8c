"""The corpus registry: a corpus (a collection the agent can search) is one file that registers itself.

SEE: docs/design.md section 9 and CONTRIBUTING.md ("Adding things"). A corpus is a module that defines

    CORPUS = Corpus(name="pubmed", description="...", inputs=lambda settings: [DATA / "papers.jsonl"])

and lives either in `tools/corpora/` (found automatically: every module there with a `CORPUS`)
or in any installed package that names it under the entry-point group `litloop.corpora`
(`[project.entry-points."litloop.corpora"] my_pdfs = "my_pkg.my_pdfs"`). It declares:

- `name` and `description` (what `litloop corpora list` shows and the agent picks by);
- how it is built from settings: `inputs(settings)` lists its source files or folders (JSONL
  records, S2ORC JSON, PDFs), which `tools.index.build_index` turns into an index under
  `data_dir/corpora/<name>` (or `location(settings)`), on first use or with
  `litloop corpora build NAME`;
- what it returns: `Corpus.search` gives `tools.base.Passage`s, each with its chunk's locator
  (the same type every retriever returns, so fusion, pooling and citations are written once);
  `Corpus.cites` and `Corpus.refs` give who cites a work and what a paper cites, with the citing
  sentences (tools/citations/query.py), so every corpus answers them without code of its own.

Several corpora searched together become one `tools.index.multi.MultiIndex`, in which paper and chunk
ids are namespaced `<corpus>:<id>` so two corpora never collide; one corpus alone keeps its own
ids, and the single-corpus path is the plain `Index`, unchanged.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
import re
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tools.base import NAMESPACE_SEP, Passage
from tools.index.layout import Progress
from tools.ingest import INGEST_VERSION
from tools.settings import ToolSettings

if TYPE_CHECKING:
    from tools.index import BuildReport, Index
    from tools.index.multi import MultiIndex

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "litloop.corpora"
PACKAGE = "tools.corpora"
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")


class UnknownCorpus(ValueError):
    """A corpus name nobody registered."""


class CorpusProblem(RuntimeError):
    """A registered corpus that cannot be built or opened (missing sources, bad declaration)."""


@dataclass(frozen=True)
class Corpus:
    """One searchable collection: what it is, how it is built, where its index lives."""

    name: str
    description: str
    inputs: Callable[[ToolSettings], Sequence[Path]]  # source files or folders, from the settings
    licence: str = ""
    location: Callable[[ToolSettings], Path] | None = None  # index folder; default data_dir/corpora/<name>
    origin: str = field(default="", compare=False)  # the module or entry point it came from

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise CorpusProblem(
                f"corpus name {self.name!r} is not valid: use 1-40 lower-case letters, digits, '-' or '_' "
                f"(no {NAMESPACE_SEP!r}: it separates the corpus from the paper id)"
            )
        if not callable(self.inputs):
            raise CorpusProblem(f"corpus {self.name!r}: `inputs` must be a function of the settings")

    # --- where and what
    def index_path(self, settings: ToolSettings) -> Path:
        if self.location is not None:
            return Path(self.location(settings)).expanduser()
        return settings.data_dir / "corpora" / self.name

    def source_files(self, settings: ToolSettings) -> list[Path]:
        paths = [Path(p).expanduser() for p in self.inputs(settings)]
        missing = [str(p) for p in paths if not p.exists()]
        if not paths or missing:
            raise CorpusProblem(
                f"corpus {self.name!r} ({self.origin or 'registered'}): source "
                f"{', '.join(missing) or '(none given)'} not found; check its inputs"
            )
        return paths

    def is_built(self, settings: ToolSettings) -> bool:
        return (self.index_path(settings) / "CURRENT").exists()

    # --- building
    def build(
        self, settings: ToolSettings, *, rebuild: bool = False, limit: int | None = None, progress: Progress = False
    ) -> BuildReport:
        """Index the corpus's sources (new papers only, unless `rebuild`). `limit` builds a slice:
        the first `limit` records of each JSONL source and the `limit` smallest files of each
        folder, for trials and the contract test."""
        from tools.index import build_index

        sources = self.source_files(settings)
        if limit is None:
            return build_index(sources, self.index_path(settings), settings, rebuild=rebuild, progress=progress)
        with tempfile.TemporaryDirectory(prefix=f"litloop-{self.name}-slice-") as tmp:
            sliced = slice_inputs(sources, limit, Path(tmp))
            return build_index(sliced, self.index_path(settings), settings, rebuild=rebuild, progress=progress)

    def ensure(self, settings: ToolSettings, progress: Progress = False) -> Path:
        """The index path, building it on first use, or again when it no longer matches the
        settings (a registered corpus is rebuilt from its own sources, so nothing is lost)."""
        from tools.index import IndexFormatOld, IndexProblem, open_index, upgrade_index

        path = self.index_path(settings)
        if (path / "CURRENT").exists():
            try:
                try:
                    idx = open_index(path, settings)
                except IndexFormatOld:
                    log.warning("upgrading corpus %s to this litloop's index format (keeps its embeddings)", self.name)
                    upgrade_index(path, settings, progress=progress)
                    idx = open_index(path, settings)
                cut_by = idx.manifest.ingest_version
                idx.close()
                if cut_by >= INGEST_VERSION:
                    return path
                log.warning(
                    "rebuilding corpus %s: its papers were cut by an older version of the parsers "
                    "(ingest version %s < %s)",
                    self.name,
                    cut_by,
                    INGEST_VERSION,
                )
            except IndexProblem as exc:
                log.warning("rebuilding corpus %s: %s", self.name, exc)
        log.info("building corpus %s in %s (first use)", self.name, path)
        self.build(settings, rebuild=True, progress=progress)
        return path

    def open(self, settings: ToolSettings, build: bool = True, progress: Progress = False) -> Index:
        from tools.index import IndexProblem, open_index

        if build:
            self.ensure(settings, progress)
        elif not self.is_built(settings):
            raise IndexProblem(f"corpus {self.name!r} is not built yet; run `litloop corpora build {self.name}`")
        return open_index(self.index_path(settings), settings)

    # --- what it returns
    def search(self, settings: ToolSettings, query: str, k: int = 10, retriever: str = "hybrid") -> list[Passage]:
        """The tool interface: the top `k` papers for `query`, each as its evidence Passage
        (paper id, chunk id, text, score, source, locator)."""
        idx = self.open(settings)
        try:
            return hits_to_passages(idx, query, k, retriever, self.name)
        finally:
            idx.close()

    def cites(self, settings: ToolSettings, work: str) -> dict[str, Any]:
        """The tool interface for citations: who cites `work` (a paper id, a reference id or title
        words) and what they say (tools/citations/query.py)."""
        from tools.citations.query import cites_record

        idx = self.open(settings)
        try:
            return cites_record(idx, work)
        finally:
            idx.close()

    def refs(self, settings: ToolSettings, paper_id: str) -> dict[str, Any]:
        """What paper `paper_id` cites, each reference with its citing sentences."""
        from tools.citations.query import refs_record

        idx = self.open(settings)
        try:
            return refs_record(idx, paper_id)
        finally:
            idx.close()

    def info(self, settings: ToolSettings) -> dict[str, Any]:
        """What `litloop corpora list --json` shows for this corpus (reads the manifest only)."""
        from tools.index import IndexProblem, current_version, dir_size, read_manifest

        path = self.index_path(settings)
        row: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "licence": self.licence,
            "origin": self.origin,
            "index": str(path),
            "built": False,
            "papers": None,
            "chunks": None,
            "bytes": None,
        }
        try:
            version = current_version(path)
        except IndexProblem:
            return row
        counts = read_manifest(version).counts
        row.update(built=True, papers=counts["papers"], chunks=counts["chunks"], bytes=dir_size(version))
        return row


# ----------------------------------------------------------------------------- discovery


class Registry:
    """The corpora of one package folder plus one entry-point group, found on first use."""

    def __init__(self, package: str = PACKAGE, group: str = ENTRY_POINT_GROUP):
        self.package = package
        self.group = group
        self._lock = threading.Lock()
        self._found: dict[str, Corpus] | None = None
        self._added: dict[str, Corpus] = {}

    def all(self) -> dict[str, Corpus]:
        with self._lock:
            if self._found is None:
                self._found = self._discover()
            return {**self._found, **self._added}

    def names(self) -> list[str]:
        return sorted(self.all())

    def get(self, name: str) -> Corpus:
        found = self.all()
        if name not in found:
            raise UnknownCorpus(
                f"unknown corpus {name!r}; registered: {', '.join(sorted(found)) or '(none)'} "
                "(add one as a module in tools/corpora/ or an entry point in "
                f"'{self.group}': see docs/corpora.md)"
            )
        return found[name]

    def register(self, corpus: Corpus, replace_existing: bool = False) -> Corpus:
        """Register a corpus from code (notebooks, tests); discovered ones need no call."""
        if corpus.name in self.all() and not replace_existing:
            raise CorpusProblem(
                f"a corpus named {corpus.name!r} is already registered ({self.all()[corpus.name].origin})"
            )
        with self._lock:
            self._added[corpus.name] = corpus if corpus.origin else replace(corpus, origin="register()")
        return self._added[corpus.name]

    def unregister(self, name: str) -> None:
        with self._lock:
            self._added.pop(name, None)

    def refresh(self) -> None:
        with self._lock:
            self._found = None

    def _discover(self) -> dict[str, Corpus]:
        found: dict[str, Corpus] = {}
        package = importlib.import_module(self.package)
        for mod in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
            if mod.ispkg or mod.name.startswith("_"):
                continue
            module = importlib.import_module(f"{self.package}.{mod.name}")
            if hasattr(module, "CORPUS"):
                self._add(found, module.CORPUS, module.__name__)
        for ep in _entry_points(self.group):
            try:
                obj = ep.load()
            except Exception as exc:
                log.warning("corpus entry point %r (%s) failed to load: %s", ep.name, ep.value, exc)
                continue
            self._add(found, getattr(obj, "CORPUS", obj), f"entry point {ep.name} ({ep.value})")
        return found

    @staticmethod
    def _add(found: dict[str, Corpus], corpus: Any, origin: str) -> None:
        if not isinstance(corpus, Corpus):
            log.warning("%s: CORPUS is a %s, not a tools.registry.Corpus; skipped", origin, type(corpus).__name__)
            return
        if corpus.name in found:
            log.warning(
                "%s: a corpus named %r is already registered by %s; skipped",
                origin,
                corpus.name,
                found[corpus.name].origin,
            )
            return
        found[corpus.name] = replace(corpus, origin=origin)


def _entry_points(group: str) -> Iterable[Any]:
    from importlib.metadata import entry_points

    return entry_points(group=group)


REGISTRY = Registry()


def corpus_names() -> list[str]:
    return REGISTRY.names()


def get_corpus(name: str) -> Corpus:
    return REGISTRY.get(name)


def register(corpus: Corpus, replace_existing: bool = False) -> Corpus:
    return REGISTRY.register(corpus, replace_existing)


# ----------------------------------------------------------------------------- several corpora


def open_corpora(
    names: Sequence[str], settings: ToolSettings, *, build: bool = True, progress: Progress = False
) -> Index | MultiIndex:
    """One corpus: its plain Index (its own ids). Several: a MultiIndex over them, ids namespaced.

    Every name is checked before anything is opened or built, so a typo fails at once."""
    names = list(dict.fromkeys(names))
    if not names:
        raise UnknownCorpus(f"no corpus named; registered: {', '.join(corpus_names())}")
    corpora = [get_corpus(n) for n in names]
    if len(corpora) == 1:
        return corpora[0].open(settings, build, progress)
    from tools.index.multi import MultiIndex

    parts: dict[str, Index] = {}
    try:
        for c in corpora:
            parts[c.name] = c.open(settings, build, progress)
    except BaseException:
        for idx in parts.values():
            idx.close()
        raise
    return MultiIndex(parts)


def hits_to_passages(idx: Any, query: str, k: int, retriever: str, label: str) -> list[Passage]:
    """tools.index.search's paper hits as Passages: each paper's evidence chunk, scored by the paper's
    score, `source` naming the corpus (or corpora) and the retriever."""
    from tools.index.search import search

    return [replace(h.chunk, score=h.score, source=f"{label}/{retriever}") for h in search(idx, query, retriever, k)]  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- slices


def slice_inputs(paths: Sequence[Path], limit: int, workdir: Path) -> list[Path]:
    """Copies of at most `limit` papers of each source under `workdir`: a JSONL file's first
    `limit` records, a folder's `limit` smallest supported files (with their `.meta.json`;
    smallest, because a slice is for a quick trial)."""
    from tools.ingest.loader import discover

    if limit < 1:
        raise ValueError("a slice needs at least one paper per source")
    out: list[Path] = []
    workdir.mkdir(parents=True, exist_ok=True)
    for n, path in enumerate(paths):
        dest = workdir / f"{n}-{path.name}"
        if path.is_dir():
            dest.mkdir(parents=True)
            files, _ = discover([path])
            for f in sorted(files, key=lambda f: (f.stat().st_size, str(f)))[:limit]:
                target = dest / f.relative_to(path)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(f, target)
                meta = f.with_name(f.stem + ".meta.json")
                if meta.exists():
                    shutil.copy2(meta, target.with_name(meta.name))
            out.append(dest)
        elif path.suffix.lower() == ".jsonl":
            with path.open(encoding="utf-8") as src, dest.open("w", encoding="utf-8") as dst:
                kept = 0
                for line in src:
                    if kept >= limit:
                        break
                    if line.strip():
                        dst.write(line)
                        kept += 1
            out.append(dest)
        else:
            out.append(path)  # one file is one paper
    return out
