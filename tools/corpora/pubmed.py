"""The `pubmed` corpus: 1,000 biomedical abstracts from PubMedQA (MIT; see pubmed_data/README.md).

Abstract-level only (no titles, no citation graph), so Relate's coupling source finds nothing
here and the paper-embedding and paper-BM25 neighbours carry ranking B.
"""

from __future__ import annotations

from pathlib import Path

from tools.registry import Corpus

DATA = Path(__file__).resolve().parent / "pubmed_data"

CORPUS = Corpus(
    name="pubmed",
    description="1,000 PubMed abstracts (biomedical research; the PubMedQA expert-labelled set)",
    inputs=lambda settings: [DATA / "papers.jsonl"],
    licence="MIT (PubMedQA, Jin et al. 2019)",
)
