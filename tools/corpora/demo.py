"""The embedded demo corpus: CiteSeer abstracts with their citation graph plus four CC BY ACL
PDFs, so the demo shows both abstract-level and full-text evidence (see demo_data/README.md)."""

from __future__ import annotations

import logging
from pathlib import Path

from agent.settings import Settings

log = logging.getLogger(__name__)

DEMO_DATA = Path(__file__).resolve().parent / "demo_data"


def demo_inputs() -> list[Path]:
    return [DEMO_DATA / "citeseer.jsonl", DEMO_DATA / "pdfs"]


def ensure_demo_index(settings: Settings, progress: bool = False) -> Path:
    """The demo index path, building it on first use (or again when it no longer matches the
    settings: it is litloop's own, so rebuilding loses nothing)."""
    from tools.index import IndexProblem, build_index, open_index

    path = settings.demo_index
    if (path / "CURRENT").exists():
        try:
            open_index(path, settings).close()
            return path
        except IndexProblem as exc:
            log.warning("rebuilding the demo index: %s", exc)
    log.info("building the demo index in %s (first use)", path)
    build_index(demo_inputs(), path, settings, rebuild=True, progress=progress)
    return path
