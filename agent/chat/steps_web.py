"""The web chat's step timeline: one `st.status` per stage of `ask()`'s progress (a search round,
the reading, the answer) that fills in while the agent works, and below the stages one running
status that says what the agent is doing now, shown from the moment a question is sent (starting
the embedded model, opening the index, writing the answer), so a wait never shows only ticked
steps."""

from __future__ import annotations

import html
import logging
from typing import Any, Literal

import streamlit as st

from agent.records.progress import Timeline, timeline_of

_CONTEXT_LOGGER = "streamlit.runtime.scriptrunner_utils.script_run_context"


class _NoMissingContext(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "missing ScriptRunContext" not in record.getMessage()


def quiet_thread_warnings() -> None:
    """Drop Streamlit's "missing ScriptRunContext!" warning, which the index build's and the
    model's worker threads trigger by the hundred and a user cannot act on; other warnings of
    that logger stay."""
    logger = logging.getLogger(_CONTEXT_LOGGER)
    if not any(isinstance(f, _NoMissingContext) for f in logger.filters):
        logger.addFilter(_NoMissingContext())


STARTING = "Starting: opening the index…"
DRAFT_NOTE = "Writing: citations attach once each claim is checked against its sentences."
MODEL_STARTING = "Starting the embedded model (some seconds, the first time)…"


def md(text: str) -> str:
    """Text shown as Markdown without `$` turning into LaTeX."""
    return str(text).replace("$", "\\$")


def next_step(timeline: Timeline) -> str:
    """What the agent does after the stages so far, as the running status says it."""
    if not timeline.stages:
        return STARTING
    last = timeline.stages[-1]
    if last.key == "read":
        return "Writing the answer…"
    if last.key.startswith("round-"):
        return "Deciding the next step: another round, reading or the answer…"
    return "Finishing…"


class LiveTimeline:
    """Expandable steps that fill in while the agent works (one `st.status` per stage), and the
    running status of what happens now below them."""

    def __init__(self, first: str = STARTING) -> None:
        self.timeline = Timeline()
        self.boxes: dict[str, list] = {}
        self.steps = st.container()
        self.pending = st.empty()
        self.draft = st.empty()
        self.waiting(first)

    def waiting(self, label: str | None) -> None:
        """Show `label` as the running status below the steps (None: none)."""
        if label is None:
            self.pending.empty()
            return
        self.pending.status(md(label), state="running", expanded=False)

    def add(self, ev: dict[str, Any]) -> None:
        if ev.get("node") == "draft":
            self.show_draft(str(ev.get("text") or ""))
            return
        stage = self.timeline.add(ev)
        if stage is None:
            return
        if stage.key not in self.boxes:
            with self.steps:
                self.boxes[stage.key] = [st.status(md(stage.title), expanded=True, state="running"), 0]
        box = self.boxes[stage.key]
        with box[0]:
            for line in stage.lines[box[1] :]:
                st.markdown("- " + md(line))
        box[1] = len(stage.lines)
        box[0].update(label=md(stage.title), state="complete" if stage.done else "running", expanded=not stage.done)
        running = any(not s.done for s in self.timeline.stages)
        self.waiting(None if running or stage.key == "answer" else next_step(self.timeline))

    def show_draft(self, text: str) -> None:
        """The answer's words as the model writes them, marked as a draft: its claims are checked
        against their sentences once it is whole, and the answer then replaces it (escaped:
        the model copies paper text)."""
        if not text:
            self.draft.empty()
            return
        with self.draft.container():
            st.caption(DRAFT_NOTE)
            st.markdown(f"<div class='litloop-draft'>{html.escape(text)} ▍</div>", unsafe_allow_html=True)

    def done(self) -> None:
        self.waiting(None)


def show_timeline(events: list[dict[str, Any]], failed: bool = False) -> None:
    stages = timeline_of(events).stages
    for i, stage in enumerate(stages):
        state: Literal["error", "complete"] = "error" if failed and i == len(stages) - 1 else "complete"
        with st.status(md(stage.title), expanded=False, state=state):
            for line in stage.lines:
                st.markdown("- " + md(line))
