"""The on-disk index: papers, chunks, two BM25 indexes, dense chunks in Chroma (embedded in a
segment folder, or a collection on a Chroma server: tools/retrieval/dense.py), paper embeddings and the
citation graph, under one manifest per version.

Layout of an index directory DIR (format 2):

    DIR/CURRENT             name of the live version folder (replaced atomically)
    DIR/v-<stamp>/          one complete version, small: what changes with every add
        manifest.json       format, embedder, tokenizer, BM25 parameters and corpus-wide statistics,
                            fingerprint, counts, and the segments the version is made of, in order
        papers.sqlite       paper records (references resolved to corpus ids), each with the rows
                            of its chunks; rows in paper order (paper BM25, paper embeddings)
        chunk_bm25.*.npy    corpus-wide term statistics of the chunk BM25 index (terms, df)
        paper_bm25.*.npy    the same for the paper BM25 index (all chunks of a paper)
        graph.json          citation graph (node-link JSON, no pickle)
        citations.sqlite    what each bibliography entry points to (a paper here or a reference
                            record) and the reference records, one per cited work
        .readers            the readers' lease: each open `IndexView` holds a shared flock on it
    DIR/segments/s-<stamp>/ one segment: the papers one build or add brought, never changed after
        segment.json        its record (name, counts, where its vectors are), as the manifest lists it
        chunks.sqlite       its chunks with locators, rows following the previous segments'
        contexts.sqlite     its papers' citation contexts (tools/citations/store.py)
        chunk_bm25.*.npy    its chunks' term frequencies (tools/retrieval/bm25_segments.py), memory-mapped
        paper_bm25.*.npy    its papers' term frequencies
        paper_emb.npy       its papers' embeddings
        chroma/             persistent Chroma collection of its chunk windows (embedded store), or
        dense.json          its collection on a Chroma server (LITLOOP_DENSE__URL)
    DIR/.building-<stamp>/  a version being written (removed when the next build starts)
    DIR/segments/.building-<name>/  a segment being written (likewise)
    DIR/.removing-<name>/   a superseded version being deleted

Opening an index reads the manifest and connects to the record files: papers and chunks are
read by row or id when a query needs them (tools/index/store.py), BM25 arrays are memory-mapped, and
each segment's Chroma opens on the first dense query. So an index opens in the same fraction of
a second at any size.

A build or an add writes one new segment and a new version folder naming the old segments and
the new one, and only then points CURRENT at it: time and disk are those of the new papers (the
version folder is rewritten whole, but it holds papers, not chunks). A crash at any moment leaves
the previous version usable; what the crash left (a half-written segment or version, a complete
segment no version names) is removed by the next build or `litloop index gc`. `litloop index compact` merges the
segments into one when there are many. An index of format 1 (the whole version in one folder,
records read whole on every open) is converted in place by `litloop index upgrade`, which keeps
its vectors. SEE: docs/design.md section 2.

A reader keeps the version it opened: the heavy parts load lazily, so a version deleted under an
open `IndexView` would be read half from the old files and half from nothing. A superseded version
is therefore removed only by a writer that gets an exclusive flock on its `.readers` (the build
right after its switch, any later build, add, compaction or upgrade, or `litloop index gc`); a
version some reader holds stays until a later one finds it free. Opening an index removes
nothing. Removal renames the folder away while holding that lock, so a reader that
read CURRENT just before sees it gone and reads CURRENT again. A segment goes when no version
folder names it any more, and only under the build lock (no build is then between writing a
segment and naming it).

A server segment's collection goes with its folder: the cleanup that removes a segment (one no
version names, an interrupted build's `.building-*`) first drops the collection its `dense.json`
names, so a collection stays searchable while any version uses it and a build killed at any
moment leaves the old version and its collections usable. When the server cannot be reached the
folder is emptied but for `dense.json`, and the next cleanup tries again.

The package, by job: `layout` (file names, errors, fsync helpers), `manifest` (the `Manifest`
model, read and written), `versions` (CURRENT, leases, the build lock, clean-up, `gc_index`),
`view` (`IndexView`, `RecordView`), `segment` (`write_segment`, which build, compact and upgrade
share), `build`, `compact`, `upgrade`, `info`.
"""

from tools.index.build import BuildFailed, BuildReport, build_index
from tools.index.compact import CompactReport, compact_index
from tools.index.info import index_info
from tools.index.layout import (
    BM25_B,
    BM25_EPSILON,
    BM25_K1,
    FORMAT_VERSION,
    SEGMENTS,
    IndexFormatOld,
    IndexProblem,
    _stamp,
    dir_size,
)
from tools.index.manifest import (
    EmbedderRecord,
    Manifest,
    SegmentRecord,
    check_manifest,
    read_manifest,
)
from tools.index.upgrade import upgrade_index
from tools.index.versions import (
    VersionLease,
    current_version,
    gc_index,
    lease_current_version,
    remove_superseded,
)
from tools.index.view import Index, IndexView, RecordView, open_index

__all__ = [
    "BM25_B",
    "BM25_EPSILON",
    "BM25_K1",
    "FORMAT_VERSION",
    "SEGMENTS",
    "BuildFailed",
    "BuildReport",
    "CompactReport",
    "EmbedderRecord",
    "Index",
    "IndexFormatOld",
    "IndexProblem",
    "IndexView",
    "Manifest",
    "RecordView",
    "SegmentRecord",
    "VersionLease",
    "_stamp",
    "build_index",
    "check_manifest",
    "compact_index",
    "current_version",
    "dir_size",
    "gc_index",
    "index_info",
    "lease_current_version",
    "open_index",
    "read_manifest",
    "remove_superseded",
    "upgrade_index",
]
