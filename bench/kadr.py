"""KADR's retrieval against the default ranking, LLM-free: candidate recall@k per question.

    python -m bench.kadr --benchmark ../shared/data/pubmedqa/dev.jsonl \
        --index /path/to/pubmedqa-index [--limit N] [--variants hybrid+prf,kadr,A+B] [--out DIR]

Variants (ranked paper lists; the question is the only query, as in LLM-free mode):
  hybrid+prf  the default question-anchored ranking: three indexes fused by RRF k 60, one PRF
              pass (docs/design.md section 3 steps 2-3; what the rra mode reranks)
  A+B         the default pipeline's reader list: pool of 20 reranked chunks, Relate, A/B fusion
  kadr        docs/design.md section 6 steps 1, 2 and 5 with reranker `none`: the chunk BM25 and dense
              rankings interleaved (sparse first, keep order, drop duplicates); with no reranker
              the two statement rerankings keep that order, so this isolates the interleaving.
              Papers in the order of their first chunk; the reader gets the papers of the first
              N_ans = 10 chunks (so R@10 here bounds what kadr answers from)
  interleave-prf  like kadr, but the dense and sparse lists of the PRF-expanded query too
"""

from __future__ import annotations

from agent.settings import Settings
from bench import retrieval as bench_retrieval
from evals.variants import VARIANTS as RETRIEVAL_VARIANTS
from tools.index import Index
from tools.retrieval.fusion import round_robin
from tools.retrieval.kadr import candidates, papers_in_order
from tools.retrieval.retrieve import prf_query


def _kadr(idx: Index, q: str, s: Settings, _r) -> list[str]:
    return papers_in_order(candidates(idx, q, s.retrieval.per_index_k, s.retrieval.rerank_depth))


def _interleave_prf(idx: Index, q: str, s: Settings, _r) -> list[str]:
    first = _kadr(idx, q, s, None)
    if not first:
        return first
    second = _kadr(idx, prf_query(idx, q, first[0], s.retrieval.prf_chars), s, None)
    return round_robin([first, second])


VARIANTS = {
    "hybrid+prf": RETRIEVAL_VARIANTS["hybrid+prf"],
    "A+B": RETRIEVAL_VARIANTS["A+B"],
    "kadr": _kadr,
    "interleave-prf": _interleave_prf,
}


def main(argv: list[str] | None = None) -> int:
    return bench_retrieval.main(
        argv,
        variants=VARIANTS,
        default=["hybrid+prf", "A+B", "kadr", "interleave-prf"],
        stem="kadr_retrieval",
        doc=__doc__,
    )


if __name__ == "__main__":
    raise SystemExit(main())
