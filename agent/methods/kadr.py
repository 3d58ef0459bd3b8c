"""Knowledge-aware diverse reranking, the `kadr` mode: the method's steps in the graph's nodes.

SEE: docs/design.md section 6 and tools/retrieval/kadr.py (the pure parts). Same graph, same seven nodes:

- search:            per query (the question, then this round's subqueries) the sparse and dense
                     chunk rankings interleaved;
- rerank:            the queries' lists interleaved, reranked for the question; the LLM declares
                     knowledge for the top N_know, one document per call (role `read`), and
                     summarises two statements (role `decompose`: they are queries); the top
                     N_rank reranked per statement and the two lists interleaved -> the pool;
                     the verdict (sufficient: KADR is one pass) carries the knowledge;
- verify:            nothing to do (rerank gave the verdict);
- expand_neighbors:  passes through: the candidates are the papers of the top N_ans chunks;
- read_paper:        passes through: each candidate paper with its chunks among the top N_ans;
- synthesize:        unchanged: it answers from those chunks (the preset's synthesize_chunks = N_ans).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from agent import prompts
from agent.llm.schemas import KnowledgeDeclaration, KnowledgeStatements
from agent.methods.base import register
from agent.runtime.calls import chunk_block, chunk_dict, llm
from agent.runtime.resources import index_for, reranker_for
from agent.state import State
from tools.base import Hit
from tools.retrieval.fusion import reranked
from tools.retrieval.kadr import (
    answer_chunks,
    candidates,
    diverse_rerank,
    interleave_by,
    papers_in_order,
)
from tools.retrieval.retrieve import chunk_of, rerank_budget

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

    from agent.context import Context


def _cid(h: Hit) -> str:
    return h["chunk_id"]


def search(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Per query (the question, then this round's subqueries) the sparse and dense chunk
    rankings interleaved."""
    idx = index_for(runtime.context)
    cfg = idx.settings.retrieval
    t = time.perf_counter()
    retrieved = []
    for q in dict.fromkeys([state["question"], *state.get("new_subqueries", [])]):
        hits = [p.hit() for p in candidates(idx, q, cfg.per_index_k, cfg.rerank_depth)]
        retrieved.append({"subquery": q, "prf_query": None, "papers": papers_in_order(hits)[:50], "hits": hits})
    return {"retrieved": retrieved, "usage": {"seconds_search": time.perf_counter() - t}}


def declare(
    state: State, runtime: Runtime[Context], docs: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], dict[str, Any], list[dict[str, Any]]]:
    """Step 3: one LLM call per document (bounded concurrency), in rank order."""
    from langchain_core.runnables.config import ContextThreadPoolExecutor

    ctx = runtime.context

    def one(doc: dict[str, Any]) -> Any:
        user = prompts.render(
            "kadr_declare", question=state["question"], document=chunk_block(doc, ctx.read_chunk_chars)
        )
        return llm("read", KnowledgeDeclaration, user, runtime)

    with ContextThreadPoolExecutor(max_workers=max(1, ctx.read_concurrency)) as pool:
        results = list(pool.map(one, docs))
    declarations = [{"chunk_id": d["chunk_id"], **r.value.model_dump()} for d, r in zip(docs, results) if r.value]
    usage: dict[str, float] = {}
    for r in results:
        for k, v in r.usage.items():
            usage[k] = usage.get(k, 0) + v
    return declarations, usage, [{**e, "node": "kadr_declare"} for r in results for e in r.errors]


def summarize(
    state: State, runtime: Runtime[Context], declarations: list[dict[str, Any]]
) -> tuple[list[str], dict[str, Any], list[dict[str, Any]]]:
    """Step 4: two complementary knowledge statements (none when there is nothing to summarise)."""
    if not declarations:
        return [], {}, []
    listing = "\n".join(
        f"- document {d['chunk_id']}: needs {'; '.join(d['needed']) or '(none listed)'}; "
        f"holds {'; '.join(d['held']) or '(nothing needed)'}"
        for d in declarations
    )
    user = prompts.render("kadr_summarize", question=state["question"], declarations=listing)
    call = llm("decompose", KnowledgeStatements, user, runtime)
    value, usage, errors = call.value, call.usage, call.errors
    statements = [s.strip() for s in (value.statement_1, value.statement_2) if s.strip()] if value else []
    return statements, usage, [{**e, "node": "kadr_summarize"} for e in errors]


def rerank(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """The queries' lists interleaved and reranked for the question; knowledge declared for the
    top N_know and summarised into two statements; the top N_rank reranked per statement and
    the two lists interleaved -> the pool. The verdict (KADR is one pass) carries the knowledge."""
    ctx = runtime.context
    idx = index_for(ctx)
    reranker = reranker_for(ctx)
    t = time.perf_counter()

    def text(h: Hit) -> str:
        return chunk_of(idx, h["chunk_id"]).text

    merged = interleave_by(_cid, *[item["hits"] for item in state.get("retrieved", [])])
    first = reranked(reranker, state["question"], merged, text, rerank_budget(idx.settings, ctx.max_rerank))
    docs = [chunk_dict(idx, h["chunk_id"]) for h in first[: ctx.kadr_n_know]]
    declarations, usage, errors = declare(state, runtime, docs)
    statements, u2, e2 = summarize(state, runtime, declarations)
    lists, final = diverse_rerank(reranker, state["question"], statements, first, ctx.kadr_n_rank, text, _cid)
    k = idx.settings.retrieval.rerank_k
    pool = {
        h["chunk_id"]: Hit(chunk_id=h["chunk_id"], paper_id=h["paper_id"], score=1.0 / (k + r), source="kadr")
        for r, h in enumerate(final, start=1)
    }
    knowledge = {
        "declarations": declarations,
        "statements": statements,
        "rerankings": [[_cid(c) for c in lst] for lst in lists],
    }
    for key, v in u2.items():
        usage[key] = usage.get(key, 0) + v
    usage["seconds_rerank"] = time.perf_counter() - t
    verdict = {"sufficient": True, "evidence_papers": [], "missing": "", "knowledge": knowledge}
    return {"pool": pool, "verdict": verdict, "usage": usage, "errors": errors + e2}


def verify(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Nothing to do: KADR is one pass and its rerank step gave the verdict."""
    return {}


def expand_neighbors(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """No Relate: the candidates are the papers of the top N_ans chunks."""
    top = answer_chunks(state.get("pool", {}).values(), runtime.context.kadr_n_ans)
    papers = papers_in_order(top)
    return {"seeds": [], "ranking": papers, "candidates": papers}


def read_paper(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Every candidate paper with its chunks among the top N_ans: no per-paper judgement, the
    method answers from the top N_ans as they stand."""
    top = answer_chunks(state.get("pool", {}).values(), runtime.context.kadr_n_ans)
    readings = [
        {
            "paper_id": pid,
            "relevant": True,
            "sufficient": False,
            "finding": "",
            "evidence_chunk_ids": [c["chunk_id"] for c in top if c["paper_id"] == pid],
        }
        for pid in state.get("candidates", [])[: runtime.context.read_papers]
    ]
    return {"readings": readings}


register("kadr", __name__)
