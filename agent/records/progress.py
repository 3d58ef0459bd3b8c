"""The steps of a run as every interface shows them: `Timeline` folds `ask()`'s progress events
into stages (a search round, the reading, the answer) that both chats draw and the MCP server
reports as progress messages. Plain strings, no UI library imported here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Stage:
    """One expandable step of the timeline: a search round, the reading, the answer."""

    key: str  # "round-1", "read", "answer"
    title: str
    lines: list[str] = field(default_factory=list)
    done: bool = False
    failed: bool = False


class Timeline:
    """Folds progress events into stages: round n/N (subqueries, papers found, pooled chunks,
    verdict and what is missing), reading (related papers, papers read), the answer."""

    def __init__(self) -> None:
        self.stages: list[Stage] = []
        self._round: Stage | None = None
        self._round_no = 0
        self._max_rounds = 0

    def stage(self, key: str) -> Stage | None:
        return next((s for s in self.stages if s.key == key), None)

    def add(self, ev: dict[str, Any]) -> Stage | None:
        """Apply one event; returns the stage it changed (None for events not shown)."""
        node = ev.get("node")
        if node == "decompose":
            self._round_no, self._max_rounds = ev.get("round", self._round_no + 1), ev.get("max_rounds", 0)
            if self._round is not None:
                self._round.done = True
            self._round = Stage(f"round-{self._round_no}", self._round_title("searching…"))
            self.stages.append(self._round)
            subs = list(dict.fromkeys(q for q in (as_typed(s) for s in ev.get("subqueries") or []) if q))
            self._round.lines.append("Subqueries: " + ("; ".join(subs) if subs else "(none new)"))
            return self._round
        if node in ("search", "rerank", "verify") and self._round is not None:
            return self._round_event(node, ev)
        if node in ("expand_neighbors", "read_paper"):
            if self._round is not None:
                self._round.done = True
            read = self.stage("read") or self._new("read", "Reading related papers…")
            if node == "expand_neighbors":
                seeds = named(ev.get("seeds"), ev.get("titles"))
                read.lines.append(f"Related papers: {ev.get('candidates', 0)} candidates from seeds {seeds}")
            else:
                relevant = ev.get("relevant") or []
                read.lines.append(
                    f"Papers read: {ev.get('papers_read', 0)}; relevant: {named(relevant, ev.get('titles'))}"
                )
                read.title = f"Read {plural(ev.get('papers_read', 0), 'paper')}, {len(relevant)} relevant"
                read.done = True
            return read
        if node == "synthesize":
            answer = ev.get("answer") or {}
            if answer.get("status") == "failed":
                ans = self._new("answer", "No answer: the run failed")
                ans.lines.append(answer.get("failure") or "the run failed")
                ans.failed = ans.done = True
                return ans
            ans = self._new("answer", "Answer written" + (" (partial)" if answer.get("status") == "partial" else ""))
            n = len(answer.get("citations") or [])
            ans.lines.append(
                "No supporting evidence found"
                if answer.get("insufficient_evidence")
                else f"{n} citation{'s' if n != 1 else ''}"
            )
            ans.done = True
            return ans
        return None

    def _new(self, key: str, title: str) -> Stage:
        stage = Stage(key, title)
        self.stages.append(stage)
        return stage

    def _round_title(self, rest: str) -> str:
        of = f"/{self._max_rounds}" if self._max_rounds else ""
        return f"Round {self._round_no}{of}: {rest}"

    def _round_event(self, node: str, ev: dict[str, Any]) -> Stage:
        r = self._round
        assert r is not None
        if node == "search":
            r.lines.append(f"Papers found: {ev.get('papers_found', 0)}")
            r.title = self._round_title(f"{ev.get('papers_found', 0)} papers found, checking evidence…")
        elif node == "rerank":
            r.lines.append(f"Evidence pool: {ev.get('pooled_chunks', 0)} chunks")
        else:
            papers = named(ev.get("evidence_papers"), ev.get("titles"))
            if ev.get("llm") is False:
                r.lines.append(f"No LLM verdict (this preset): the top papers are the evidence ({papers})")
                r.title = self._round_title("top papers taken as evidence")
            elif ev.get("sufficient"):
                r.lines.append(f"Verdict: sufficient (evidence papers: {papers})")
                r.title = self._round_title("evidence sufficient")
            else:
                missing = ev.get("missing") or ""
                r.lines.append(f"Verdict: not yet sufficient (evidence papers: {papers})")
                if missing:
                    r.lines.append(f"Missing: {missing}")
                r.title = self._round_title("not yet sufficient" + (f", missing: {missing}" if missing else ""))
            r.done = True
        return r


# the block `agent.chat.session.contextualise` appends to a follow-up question
FOLLOW_UP_HEADER = "Earlier in this conversation (context for the question above; answer only the question above):"


def as_typed(query: str) -> str:
    """A subquery as the user would read it: without the conversation block a follow-up carries
    (`agent.chat.session.contextualise`; a preset with no LLM decomposition searches for the
    question as asked, block included)."""
    return " ".join(str(query).split(FOLLOW_UP_HEADER, 1)[0].split())


TITLE_CHARS = 60  # a title in a step line, cut at a word
NAMED_PAPERS = 5  # papers a step line names before "and N more"


def named(ids: Any, titles: Any = None) -> str:
    """Papers as a step line names them: each by its title where the event gives one (cut at
    `TITLE_CHARS`), else by its id; at most `NAMED_PAPERS`, then how many more; "-" for none."""
    ids = list(ids or [])
    if not ids:
        return "-"
    titles = titles or {}

    def one(pid: str) -> str:
        title = " ".join(str(titles.get(pid) or "").split())
        if not title:
            return str(pid)
        return f"“{title if len(title) <= TITLE_CHARS else title[:TITLE_CHARS].rsplit(' ', 1)[0] + '…'}”"

    shown = "; ".join(one(p) for p in ids[:NAMED_PAPERS])
    return shown + (f" and {len(ids) - NAMED_PAPERS} more" if len(ids) > NAMED_PAPERS else "")


def plural(n: int, word: str, many: str | None = None) -> str:
    """`1 paper`, `2 papers` (`many` for an irregular plural)."""
    return f"{n} {word if n == 1 else many or word + 's'}"


def timeline_of(events: list[dict[str, Any]]) -> Timeline:
    t = Timeline()
    for ev in events:
        t.add(ev)
    return t


def about(seconds: float) -> str:
    """A duration as a person reads it: `40 s`, `3 min`, `1 h 5 min`."""
    if seconds < 60:
        return f"{max(1, round(seconds))} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"


def build_line(state: dict[str, Any], what: str = "the demo index") -> str:
    """One stage of an index build as a running status says it (a `tools.index.layout.Progress`
    sink's state): `Building the demo index (first run only): embedding chunks, 1,200 of 4,800
    windows · 40 s so far, about 2 min left`."""
    done, total, unit = state.get("done", 0), state.get("total"), state.get("unit") or "item"
    count = f"{done:,} of {total:,} {unit}s" if total else plural(done, unit)
    left = state.get("left_s")
    timing = f"{about(state.get('seconds', 0.0))} so far" + (f", about {about(left)} left" if left else "")
    return f"Building {what} (first run only): {state.get('stage', 'working')}, {count} · {timing}"
