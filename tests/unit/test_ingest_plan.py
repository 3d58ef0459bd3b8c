"""The ingest-and-embed plan both build engines share (tools/ingest/plan.py): the local loader
and Ray's driver admit the same papers in the same order with the same problems, and cut the
same chunks, for an input with a bad record, a known paper, a duplicate and a paper over the
chunk cap. Ray's worker and driver steps run here as plain functions (no Ray instance)."""

from __future__ import annotations

import json
import pickle

import pytest

from tools.index.ray_build import _parse_rows, decide_rows
from tools.ingest.chunker import chunk_document
from tools.ingest.loader import LoadResult, cut_chunks, load_documents
from tools.ingest.plan import Admission, Item, embed_call_size

pytestmark = pytest.mark.unit

MAX_CHUNKS = 5
WINDOW_CHARS = 1000


def _input(tmp_path):
    huge = " ".join(f"Sentence {i} of a runaway abstract." for i in range(2000))
    rows = [
        {"paper_id": "a", "title": "Alpha", "abstract": "About alpha."},
        {"paper_id": "known", "title": "Known", "abstract": "Already in the index."},
        {"paper_id": "huge", "title": "Huge", "abstract": huge},
        {"paper_id": "a", "title": "Alpha again", "abstract": "A duplicate."},
        {"paper_id": "b", "title": "Beta", "abstract": "About beta."},
    ]
    first = tmp_path / "1.jsonl"
    first.write_text("\n".join([json.dumps(r) for r in rows[:3]] + ["{not json"]) + "\n")
    second = tmp_path / "2.jsonl"
    second.write_text("".join(json.dumps(r) + "\n" for r in rows[3:]))
    return [first, second]


def _on_ray(files, known):
    """What load_on_ray computes, with Ray's steps called in turn: parse rows per file, the
    driver's decision, then the kept rows' documents and chunks."""
    rows = [r for n, f in enumerate(files) for r in _parse_rows({"file": n, "path": str(f)}, MAX_CHUNKS, WINDOW_CHARS)]
    result = LoadResult(files=len(files))
    keep, offsets = decide_rows([{k: v for k, v in r.items() if k != "doc"} for r in rows], known, result)
    by_key = {r["key"]: pickle.loads(r["doc"]) for r in rows if r["doc"]}
    result.documents = [by_key[k][0] for k in keep]
    result.chunks = [by_key[k][1] for k in keep]
    return result, offsets, [r["windows"] for r in rows if r["key"] in keep]


def test_local_and_ray_admit_the_same_papers_with_the_same_problems(tmp_path):
    files = _input(tmp_path)
    local = load_documents(files, known_ids={"known"}, max_chunks=MAX_CHUNKS)
    ray, offsets, windows = _on_ray(files, {"known"})

    assert [d.paper.paper_id for d in local.documents] == ["a", "huge", "b"]
    assert [d.paper.paper_id for d in ray.documents] == ["a", "huge", "b"]
    assert ray.problems == local.problems
    assert len(local.problems) == 3  # in input order: the cap, the bad line, the duplicate
    assert "not valid JSON" in local.problems[1] and "makes" in local.problems[0]
    assert "duplicate paper_id 'a'" in local.problems[2]
    assert ray.already_indexed == local.already_indexed == ["known"]
    # the same chunks, cut once, as chunk_document with the cap cuts them
    assert ray.chunks == local.chunks == [chunk_document(d, MAX_CHUNKS) for d in local.documents]
    assert [len(cs) for cs in local.chunks] == [1, MAX_CHUNKS, 1]
    assert offsets == [0, windows[0], windows[0] + windows[1]]


def test_admission_keeps_a_paper_over_the_cap_and_skips_a_later_duplicate():
    problems: list[str] = []
    already: list[str] = []
    adm = Admission({"k"}, problems, already)
    verdicts = [
        adm.decide(i)
        for i in (
            Item(error="bad"),
            Item(paper_id="k"),
            Item(paper_id="p", too_many="cap"),
            Item(paper_id="p", duplicate="dup"),
            Item(paper_id="q"),
        )
    ]
    assert verdicts == ["error", "already_indexed", "keep", "duplicate", "keep"]
    assert problems == ["bad", "cap", "dup"] and already == ["k"]
    assert not adm.wants("p") and not adm.wants("k") and adm.wants("new")


def test_the_cap_keeps_a_prefix_and_always_the_title_chunk(tmp_path):
    files = _input(tmp_path)
    [huge] = [d for d in load_documents(files).documents if d.paper.paper_id == "huge"]
    whole = chunk_document(huge)
    for cap in (None, 0, 1, 2, MAX_CHUNKS, len(whole), len(whole) + 3):
        assert cut_chunks(whole, cap) == chunk_document(huge, cap)


def test_the_embedding_call_size_is_the_local_builds():
    assert embed_call_size(32) == 256 and embed_call_size(64) == 512
