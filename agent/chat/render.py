"""Words both chats show: citation labels, answers as Markdown, errors and totals (the step
timeline itself is `agent.records.progress`). Plain strings (Markdown-safe where noted), no UI
library imported here."""

from __future__ import annotations

import re
from typing import Any

from agent.records.progress import plural
from tools.base import Locator


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


def venue_year(c: dict[str, Any]) -> str:
    return " ".join(str(x) for x in (c.get("venue"), c.get("year")) if x)


def where(c: dict[str, Any]) -> str:
    """Where the quoted chunk sits: page, section, paragraph, table, figure (or title/abstract)."""
    return Locator.from_dict(c.get("locator")).describe()


AUTHORS_SHOWN = 3  # authors named on a paper's card; the rest are "et al."


def cited_papers(citations: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The answer's citations grouped by paper, one group per card, in the order the answer
    first cites each paper."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for c in sorted(citations, key=lambda c: c.get("n", 0)):
        groups.setdefault(str(c.get("paper_id") or c.get("chunk_id")), []).append(c)
    return list(groups.values())


def byline(c: dict[str, Any]) -> str:
    """A card's line under its title: `A. Smith, B. Jones, C. Wu et al. · ACL 2005`."""
    authors = [str(a) for a in c.get("authors") or [] if str(a).strip()]
    names = ", ".join(authors[:AUTHORS_SHOWN]) + (" et al." if len(authors) > AUTHORS_SHOWN else "")
    return " · ".join(x for x in (names, venue_year(c)) if x)


def answer_markdown(answer: dict[str, Any]) -> str:
    """The answer's text as the web chat shows it: an overview's theme lines (`theme_heading`, as
    the answer wrote them) set as headings above their papers' lines, a blank line before each so
    the papers read as that theme's list; a theme's lead, in italics, as a paragraph between."""
    from agent.api import theme_heading

    text = str(answer.get("text") or "")
    heads = {theme_heading(n, t) for n, t in enumerate(answer.get("themes") or [], 1)}
    leads = tuple(t["lead"] for t in answer.get("themes") or [] if t.get("lead"))
    if not heads:
        return text
    out = []
    for line in text.split("\n"):
        if line in heads:
            out.extend(["", f"**{line}**", ""])
        elif leads and line.startswith(leads):  # the theme's lead: a paragraph of its own
            out.extend([f"*{line}*", ""])
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
    "papers with text withheld: text addressed to whoever reads it (the paper's other sentences "
    "then support no claim alone) or written in another language than the paper"
)


def flagged_lines(answer: dict[str, Any]) -> list[str]:
    """The answer's flagged papers, each with the sentence that flagged it, for a person to judge:
    `2023.acl-long.5: "Any summary of this work must state ..."`."""
    return [
        f"{f.get('paper_id', '')}: \u201c{str(f.get('sentence', ''))[:200]}\u201d"
        + (f" ({f['why']})" if f.get("why") else "")
        for f in answer.get("flagged_papers") or []
    ]


def dropped_lines(answer: dict[str, Any]) -> list[str]:
    """The claims the support check dropped from an answer, each with why:
    `"CRFs reach 99 F1." (the number '99' is not in the cited sentences)`."""
    return [f"\u201c{r.get('text', '')}\u201d ({r.get('reason', '')})" for r in answer.get("rejected_claims") or []]


def quote_html(c: dict[str, Any]) -> str:
    """A citation's quoted sentences as HTML, escaped (paper text is data), in quotation marks."""
    import html

    return "“" + html.escape(" ".join(str(c.get("quote") or "").split()), quote=False) + "”"


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


_MARKERS = re.compile(r"\[(\d+)\]")


def with_open_markers(markdown: str, citations: list[dict[str, Any]]) -> str:
    """The answer's Markdown as HTML-safe Markdown whose citation markers open their evidence
    in place: the text escaped (paper text is data: nothing in it becomes markup), then each
    "[n]" a focusable marker whose body, shown while it has the focus, is the quote with its paper
    and location, escaped too. A marker with no citation stays as it is."""
    import html

    by_n = {int(c["n"]): c for c in citations if c.get("n") is not None}

    def opened(m: re.Match[str]) -> str:
        c = by_n.get(int(m.group(1)))
        if c is None:
            return m.group(0)
        paper = html.escape(str(c.get("title") or c.get("paper_id") or ""), quote=False)
        place = html.escape(where(c), quote=False)
        # phrasing elements only (a <details> would close the paragraph the marker ends); the
        # marker takes focus on a click, and the page's style shows the body while it has it
        return (
            f"<span class='litloop-cite' tabindex='0' title='open the quote'>[{m.group(1)}]"
            f"<span class='litloop-cite-body'>{quote_html(c)} — <b>{paper}</b> · {place}</span></span>"
        )

    return _MARKERS.sub(opened, html.escape(markdown, quote=False))
