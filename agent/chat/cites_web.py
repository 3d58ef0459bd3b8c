"""The web chat's citation links, inside each cited paper's card: *Cited by n* and *References
(m)* of the paper. Either opens a panel in the card: the citing papers, or the references, each
with its citing sentences (page, section, intent, the citation marked in the sentence), a page
of rows at a time (*Previous*, *Next*, or *Show all*, the whole list in a box that scrolls), and
on every row buttons that go on to that paper's own citers or references; *Back* returns to the
listing before, *Close* shuts the panel.

The records are `litloop cites` / `litloop refs`'s (agent/chat/cites_view.py over
agent/reading/queries.py), read from the index the sidebar names. Where that index is not on this machine
(a chat that asks a litloop server) the links say so instead.
"""

from __future__ import annotations

import os
from typing import Any

import streamlit as st

from agent.chat import cites_view
from agent.chat.cites_view import CannotFollow, Listing, View
from agent.records.progress import plural

NO_LOCAL_INDEX = (
    "Citing sentences are read from the index, and this chat asks a server whose index is not on "
    "this machine: run `litloop cites {paper}` or `litloop refs {paper}` where the index is."
)


def md(text: Any) -> str:
    """Text shown as Markdown without `$` turning into LaTeX."""
    return str(text).replace("$", "\\$")


def show_links(citation: dict[str, Any], key: str, server: str | None = None) -> None:
    """*Cited by* / *References* for the paper `citation` quotes, and the panel they open. `key`
    is unique to this citation of this answer (it names the widgets and the panel's history);
    `server`, the URL of the litloop server the chat asks, if any."""
    paper = str(citation.get("paper_id") or "")
    if not paper:
        return
    server = server or _server_url()
    if server:
        st.caption(md(NO_LOCAL_INDEX.format(paper=paper)))
        return
    try:
        idx = _index()
        cites, refs = _listing(idx, "cites", paper), _listing(idx, "refs", paper)
    except CannotFollow as exc:
        st.caption(md(f"Citations of this paper are not available: {exc}"))
        return
    trail = st.session_state.setdefault(f"trail-{key}", [])
    n_refs = len(refs.record["references"])
    with st.container(horizontal=True):
        st.button(
            f"Cited by ({len(cites.rows)})",
            key=f"{key}-cites",
            on_click=_start,
            args=(key, "cites", paper),
            disabled=not cites.rows,
            help="The papers that cite this one, with the sentences that cite it.",
        )
        st.button(
            f"References ({n_refs})",
            key=f"{key}-refs",
            on_click=_start,
            args=(key, "refs", paper),
            disabled=not n_refs,
            help="What this paper cites, each reference with the sentences that cite it.",
        )
    if trail:
        view, what = trail[-1]
        try:
            _panel(key, trail, _listing(idx, view, what))
        except CannotFollow as exc:
            st.error(md(exc))


def _server_url() -> str | None:
    """The litloop server a chat started with `litloop ui --server URL` asks (LITLOOP_SERVE__URL),
    where the settings know one."""
    from agent.settings import default_settings

    return getattr(default_settings().serve, "url", None) or None


def _index() -> tuple[Any, tuple]:
    """The index the sidebar names (its corpora, else its folder, else LITLOOP_INDEX or the demo),
    and what names it."""
    index = os.path.expanduser((st.session_state.get("index") or "").strip()) or None  # `~/...` as shown
    corpora = list(st.session_state.get("corpora") or [])
    named = (None if corpora else index, tuple(corpora))
    return cites_view.open_index(named[0], corpora), named


def _listing(idx: tuple[Any, tuple], view: View, what: str) -> Listing:
    """One listing per index and work for the session: the buttons' counts and the panel would
    ask again on every rerun."""
    cache = st.session_state.setdefault("cites-listings", {})
    k = (idx[1], view, what)
    if k not in cache:
        cache[k] = cites_view.listing(idx[0], view, what)
    return cache[k]


PAGE_ROWS = 5  # rows of a panel on one page
ALL_ROWS_HEIGHT = 640  # pixels of the box that scrolls when a panel shows all its rows
CONTEXTS_SHOWN = 3  # citing sentences shown under a row until its "All n sentences"


def _page(key: str, depth: int, step: int) -> None:
    k = f"page-{key}-{depth}"
    st.session_state[k] = max(0, st.session_state.get(k, 0) + step)


def _show_all(key: str, depth: int, on: bool) -> None:
    st.session_state[f"all-{key}-{depth}"] = on


def _all_contexts(key: str) -> None:
    st.session_state[key] = True


def _first_page(key: str, depth: int) -> None:
    """A listing opened at `depth` starts on its first page."""
    st.session_state.pop(f"page-{key}-{depth}", None)
    st.session_state.pop(f"all-{key}-{depth}", None)


def _start(key: str, view: View, what: str) -> None:
    st.session_state[f"trail-{key}"] = [(view, what)]
    _first_page(key, 1)


def _push(key: str, view: View, what: str) -> None:
    st.session_state[f"trail-{key}"].append((view, what))
    _first_page(key, len(st.session_state[f"trail-{key}"]))


def _back(key: str) -> None:
    st.session_state[f"trail-{key}"].pop()


def _close(key: str) -> None:
    st.session_state[f"trail-{key}"] = []


def _panel(key: str, trail: list, shown: Listing) -> None:
    depth = len(trail)
    st.divider()
    if shown.view == "cites":
        titles = "; ".join(w["title"] or w["target"] for w in shown.record["works"])
        st.markdown(f"**Cited by:** {md(titles)}")
    else:
        st.markdown(f"**References of:** {md(shown.record['title'] or shown.record['paper_id'])}")
    st.caption(md(_counts(shown)))
    _nav(key, depth, "top")
    for note in shown.record["notes"]:
        st.warning(md(note))
    rows = _citing_rows if shown.view == "cites" else _reference_rows
    total = rows(key, depth, shown, range(0))  # counts the rows, draws none
    pages = max(1, -(-total // PAGE_ROWS))
    every = st.session_state.get(f"all-{key}-{depth}", False)
    page = min(st.session_state.get(f"page-{key}-{depth}", 0), pages - 1)
    if every:
        with st.container(height=ALL_ROWS_HEIGHT if total > PAGE_ROWS else "content"):
            rows(key, depth, shown, range(1, total + 1))
    else:
        rows(key, depth, shown, range(page * PAGE_ROWS + 1, min(total, (page + 1) * PAGE_ROWS) + 1))
    _pager(key, depth, page, pages, total, every)
    _nav(key, depth, "end")


def _pager(key: str, depth: int, page: int, pages: int, total: int, every: bool) -> None:
    """Where the panel's rows are (`Page 2 of 11 · rows 6-10 of 55`), *Previous* / *Next*, and
    *Show all* (or back to pages)."""
    if total <= PAGE_ROWS:
        return
    with st.container(horizontal=True, vertical_alignment="center"):
        if every:
            st.caption(f"All {total} rows")
            st.button("Show pages", key=f"{key}-pages-{depth}", on_click=_show_all, args=(key, depth, False))
            return
        first, last = page * PAGE_ROWS + 1, min(total, (page + 1) * PAGE_ROWS)
        st.button(
            "Previous",
            key=f"{key}-prev-{depth}",
            icon=":material/chevron_left:",
            on_click=_page,
            args=(key, depth, -1),
            disabled=page == 0,
        )
        st.caption(f"Page {page + 1} of {pages} · rows {first}–{last} of {total}")
        st.button(
            "Next",
            key=f"{key}-next-{depth}",
            icon=":material/chevron_right:",
            on_click=_page,
            args=(key, depth, 1),
            disabled=page >= pages - 1,
        )
        st.button(f"Show all {total}", key=f"{key}-all-{depth}", on_click=_show_all, args=(key, depth, True))


def _nav(key: str, depth: int, where: str) -> None:
    """*Back* (past the first listing) and *Close*, above the rows and again below them."""
    end = "" if where == "top" else "-end"
    with st.container(horizontal=True):
        if depth > 1:
            st.button("Back", key=f"{key}-back-{depth}{end}", icon=":material/arrow_back:", on_click=_back, args=(key,))
        st.button("Close", key=f"{key}-close-{depth}{end}", icon=":material/close:", on_click=_close, args=(key,))


def _counts(shown: Listing) -> str:
    """The panel's counts, shown before its rows: `2 papers cite it, in 4 sentences`."""
    if shown.view == "cites":
        papers = len(shown.rows)
        sentences = sum(len(c["contexts"]) for w in shown.record["works"] for c in w["citing"])
        return f"{plural(papers, 'paper')} {'cites' if papers == 1 else 'cite'} it, in {plural(sentences, 'sentence')}"
    refs = shown.record["references"]
    in_text = sum(1 for r in refs if r["contexts"])
    in_index = sum(1 for r in refs if r.get("kind") == "paper")
    return f"{plural(len(refs), 'reference')}: {in_text} cited in a sentence, {in_index} in the index"


def _citing_rows(key: str, depth: int, shown: Listing, drawn: range) -> int:
    """The citing papers numbered in `drawn` (from 1); how many there are in all."""
    n = 0
    works = shown.record["works"]
    for w in works:
        first = n + 1
        n_contexts = sum(len(c["contexts"]) for c in w["citing"])
        for c in w["citing"]:
            n += 1
            if n not in drawn:
                continue
            if len(works) > 1 and n in (first, drawn.start):  # the work a group of rows cites
                st.caption(
                    md(
                        f"{w['title'] or w['target']}: cited by {plural(len(w['citing']), 'paper')}, "
                        f"{plural(n_contexts, 'sentence')}"
                    )
                )
            year = f" ({c['year']})" if c["year"] else ""
            st.markdown(f"**{n}. {md(c['title'] or c['paper_id'])}**{md(year)} · `{c['paper_id']}`")
            if not c["contexts"]:
                st.caption("A reference the source gives without text: no citing sentence.")
            _contexts(f"{key}-{depth}-{n}", c["contexts"])
            _follow_buttons(key, depth, n, shown.rows[n - 1])
    return n


def _reference_rows(key: str, depth: int, shown: Listing, drawn: range) -> int:
    """The references cited in a sentence or in the index numbered in `drawn` (from 1, in the
    order of the bibliography), and after the last one a line naming the others; how many
    such references there are."""
    without, listed = [], 0
    rows = list(enumerate(zip(shown.record["references"], shown.rows, strict=True), start=1))
    for n, (r, row) in rows:
        if not r["contexts"] and row.kind != "paper":
            without.append(f"{n}. {row.title}")
            continue
        listed += 1
        if listed not in drawn:
            continue
        year = f" ({r['year']})" if r["year"] else ""
        where = f"`{r['target']}`" if r["target"] else "unresolved"
        st.markdown(f"**{n}. {md(row.title)}**{md(year)} · {where}")
        _contexts(f"{key}-{depth}-{n}", r["contexts"])
        _follow_buttons(key, depth, n, row)
    if without and drawn and listed <= drawn.stop - 1:
        st.caption(
            md(f"{plural(len(without), 'more reference')} the text does not cite in a sentence: " + "; ".join(without))
        )
    return listed


def _contexts(key: str, contexts: list[dict[str, Any]]) -> None:
    """A row's citing sentences: the first CONTEXTS_SHOWN, and a button that shows them all."""
    every = st.session_state.get(f"ctx-{key}", False)
    for c in contexts if every else contexts[:CONTEXTS_SHOWN]:
        cue = f" ({c['cue']})" if c.get("cue") else ""
        st.markdown(f"*{md(c['intent'])}*{md(cue)} · {md(cites_view.context_where(c))} · `{c['chunk_id']}`")
        # the sentence with the citation marked (escaped: paper text is data)
        st.markdown(f"<div class='litloop-chunk'>{cites_view.marked_sentence(c)}</div>", unsafe_allow_html=True)
    if len(contexts) > CONTEXTS_SHOWN and not every:
        st.button(
            f"All {len(contexts)} sentences",
            key=f"{key}-contexts",
            on_click=_all_contexts,
            args=(f"ctx-{key}",),
            type="tertiary",
        )


def _follow_buttons(key: str, depth: int, n: int, row: cites_view.Row) -> None:
    """Buttons that go on from a row, with their counts as on the citation: who cites it, and
    (a paper of the index) what it cites; a count of 0 greys its button."""
    if row.target is None:
        return
    try:
        idx = _index()
        cited_by = len(_listing(idx, "cites", row.target).rows)
        refs = len(_listing(idx, "refs", row.target).record["references"]) if row.kind == "paper" else 0
    except CannotFollow:
        return
    with st.container(horizontal=True):
        st.button(
            f"Cited by ({cited_by})",
            key=f"{key}-{depth}-{n}-cites",
            on_click=_push,
            args=(key, "cites", row.target),
            disabled=not cited_by,
        )
        if row.kind == "paper":
            st.button(
                f"References ({refs})",
                key=f"{key}-{depth}-{n}-refs",
                on_click=_push,
                args=(key, "refs", row.target),
                disabled=not refs,
            )
