"""The embedded demo corpus: CiteSeer abstracts with their citation graph plus four CC BY ACL
PDFs, so the demo shows both abstract-level and full-text evidence (see demo_data/README.md).

Registered as the corpus `demo`; its index keeps its historical place, `data_dir/demo-index`
(`ToolSettings.demo_index`), so an index built before the registry existed is reused.
"""

from __future__ import annotations

import logging
from pathlib import Path

from tools.index.layout import Progress
from tools.registry import Corpus
from tools.settings import ToolSettings

log = logging.getLogger(__name__)

DEMO_DATA = Path(__file__).resolve().parent / "demo_data"


# questions the demo collection answers, one of each shape (a fact, the papers that qualify, an
# overview): the chats offer them before its index is built, and `litloop demo` asks the first
EXAMPLE_QUESTIONS = (
    "How does SPECTER use citations to learn document-level representations of papers?",
    "Which papers use conditional random fields for information extraction?",
    "Give me an overview of the research on collaborative filtering recommender systems.",
)


def demo_inputs() -> list[Path]:
    return [DEMO_DATA / "citeseer.jsonl", DEMO_DATA / "pdfs"]


CORPUS = Corpus(
    name="demo",
    description="3,186 CiteSeer computer-science abstracts (c. 1995-2002) with their citation graph, "
    "plus 4 full-text ACL Anthology PDFs",
    inputs=lambda settings: demo_inputs(),
    licence="CiteSeer (LINQS, research use); ACL Anthology PDFs CC BY 4.0",
    location=lambda settings: settings.demo_index,
)


def ensure_demo_index(settings: ToolSettings, progress: Progress = False) -> Path:
    """The demo index path, building it on first use (or again when it no longer matches the
    settings: it is litloop's own, so rebuilding loses nothing)."""
    return CORPUS.ensure(settings, progress)
