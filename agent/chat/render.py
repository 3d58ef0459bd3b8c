"""Words both chats show: the step timeline from `ask()`'s progress events, citation labels,
totals. Plain strings (Markdown-safe where noted), no UI library imported here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tools.base import Locator


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
                seeds = ", ".join(ev.get("seeds") or []) or "-"
                read.lines.append(f"Related papers: {ev.get('candidates', 0)} candidates from seeds {seeds}")
            else:
                relevant = ev.get("relevant") or []
                read.lines.append(f"Papers read: {ev.get('papers_read', 0)}; relevant: {', '.join(relevant) or '-'}")
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
            papers = ", ".join(ev.get("evidence_papers") or []) or "-"
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


def plural(n: int, word: str, many: str | None = None) -> str:
    """`1 paper`, `2 papers` (`many` for an irregular plural)."""
    return f"{n} {word if n == 1 else many or word + 's'}"


def home_path(path: object) -> str:
    """A path as the user reads it: under their home folder as `~/...` (no machine's absolute
    home path on the page)."""
    import os

    text = str(path)
    home = os.path.expanduser("~").rstrip(os.sep)
    if home and (text == home or text.startswith(home + os.sep)):
        return "~" + text[len(home) :]
    return text


def endpoint_host(base_url: str) -> str:
    """Where a model endpoint is, without its port or path: `api.openai.com`, or `a server on
    this machine` for a loopback address."""
    from urllib.parse import urlsplit

    host = urlsplit(base_url if "//" in base_url else "//" + base_url).hostname or base_url
    if host in ("localhost", "::1") or host.startswith("127."):
        return "a server on this machine"
    return host


def thread_label(t: dict[str, Any]) -> str:
    """A conversation's button in the list: its first question and when it was last used
    (`Which papers use CRFs? · 4 Dec 03:12`), so two with the same question differ."""
    from datetime import datetime

    title = t.get("title") or "(untitled)"
    when = t.get("updated") or t.get("created")
    try:
        at = datetime.fromtimestamp(when) if isinstance(when, int | float) else datetime.fromisoformat(str(when))
    except (TypeError, ValueError, OverflowError, OSError):
        return title
    return f"{title} · {at.astimezone().strftime('%d %b %H:%M')}"


def timeline_of(events: list[dict[str, Any]]) -> Timeline:
    t = Timeline()
    for ev in events:
        t.add(ev)
    return t


def venue_year(c: dict[str, Any]) -> str:
    return " ".join(str(x) for x in (c.get("venue"), c.get("year")) if x)


def where(c: dict[str, Any]) -> str:
    """Where the quoted chunk sits: page, section, paragraph, table, figure (or title/abstract)."""
    return Locator.from_dict(c.get("locator")).describe()


def citation_label(c: dict[str, Any]) -> str:
    """`[1] Title — ACL 2005 · p. 3, § Results, Table 2`"""
    meta = venue_year(c)
    return f"[{c['n']}] {c.get('title') or c.get('paper_id')}" + (f" — {meta}" if meta else "") + f" · {where(c)}"


def answer_markdown(answer: dict[str, Any]) -> str:
    """The answer's text as the web chat shows it: an overview's theme lines (`theme_heading`, as
    the answer wrote them) set as headings above their papers' lines, a blank line before each so
    the papers read as that theme's list."""
    from agent.answer.overview import theme_heading

    text = str(answer.get("text") or "")
    heads = {theme_heading(n, t) for n, t in enumerate(answer.get("themes") or [], 1)}
    if not heads:
        return text
    out = []
    for line in text.split("\n"):
        if line in heads:
            out.extend(["", f"**{line}**", ""])
        else:
            out.append(line)
    return "\n".join(out).strip("\n")


def table_rows_shown(answer: dict[str, Any]) -> list[dict[str, Any]]:
    """The answer's `table_rows` for a chat to draw as a table, or [] where its text already is
    that table (a comparison, an overview asked as a table) or lists the same rows (an overview)."""
    rows = answer.get("table_rows") or []
    text = str(answer.get("text") or "")
    if answer.get("themes") or any(line.startswith("|") for line in text.splitlines()):
        return []
    return rows


FLAGGED_NOTE = (
    "papers with text addressed to whoever reads them: that text was withheld, and their other "
    "sentences support no claim alone"
)


def flagged_lines(answer: dict[str, Any]) -> list[str]:
    """The answer's flagged papers, each with the sentence that flagged it, for a person to judge:
    `2023.acl-long.5: "Any summary of this work must state ..."`."""
    return [
        f"{f.get('paper_id', '')}: \u201c{str(f.get('sentence', ''))[:200]}\u201d"
        for f in answer.get("flagged_papers") or []
    ]


def dropped_lines(answer: dict[str, Any]) -> list[str]:
    """The claims the support check dropped from an answer, each with why:
    `"CRFs reach 99 F1." (the number '99' is not in the cited sentences)`."""
    return [f"\u201c{r.get('text', '')}\u201d ({r.get('reason', '')})" for r in answer.get("rejected_claims") or []]


def highlighted_chunk(c: dict[str, Any]) -> str:
    """A citation's chunk as HTML, every character escaped (paper text is data), with the quoted
    sentences inside <mark> at their offsets (a table chunk as a table: agent/chat/chunk_html.py);
    the quote alone when the chunk text is absent."""
    from agent.chat.chunk_html import chunk_html

    return chunk_html(c)


def error_lines(errors: list[dict[str, Any]], limit: int = 6) -> list[str]:
    """The run's failed LLM calls grouped by step and message, e.g.
    `read (6 calls): OpenAIConnectionError: Connection error. (...)`; at most `limit` lines."""
    groups: dict[tuple[str, str], int] = {}
    for e in errors:
        key = (str(e.get("node") or "?"), str(e.get("error") or e.get("kind") or "failed"))
        groups[key] = groups.get(key, 0) + 1
    lines = [f"{node}{f' ({n} calls)' if n > 1 else ''}: {error}" for (node, error), n in groups.items()]
    return lines if len(lines) <= limit else [*lines[:limit], f"… and {len(lines) - limit} more"]


def status_line(status: str | None, answer: dict[str, Any], errors: list[dict[str, Any]]) -> str | None:
    """What a failed or partial answer says above its errors (None for an ok one)."""
    if status == "failed":
        return "No answer: " + (answer.get("failure") or "the run failed")
    if status == "partial":
        n = len(errors)
        return f"Partial answer: {n} LLM call{'s' if n != 1 else ''} of the run failed; the run went on without them"
    return None


def totals_line(totals: dict[str, Any], trace_id: str | None = None) -> str:
    bits = []
    if totals.get("rounds"):
        bits.append(f"{totals['rounds']} round{'s' if totals['rounds'] != 1 else ''}")
    if "llm_calls" in totals:
        bits.append(plural(totals["llm_calls"], "LLM call"))
        bits.append(f"{totals.get('input_tokens', 0):,} + {totals.get('output_tokens', 0):,} tokens")
    if totals.get("seconds") is not None:
        bits.append(f"{totals['seconds']:.1f} s")
    if totals.get("preset"):
        bits.append(f"preset {totals['preset']}")
    if trace_id:
        bits.append(f"trace {short_id(trace_id)}")
    return " · ".join(bits)


def short_id(trace_id: str) -> str:
    """The distinctive end of a UUIDv7 trace id (what `litloop trace show` accepts)."""
    return trace_id[-12:]
