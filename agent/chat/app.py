"""The litloop web chat (Streamlit). Start it with `litloop ui`; see docs/chat.md.

Each question runs the agent through `agent.chat.session.ask_turn`: a live step timeline from
`ask()`'s progress events while it works, then the answer with numbered citations that open the
evidence, totals, and the run tree from the local trace. Conversations live in
`data_dir/chat/chats.sqlite` (LangGraph's SQLite checkpointer plus a table of turns).

With `litloop ui --server URL` (LITLOOP_SERVE__URL) the questions run on that `litloop serve`
server and the conversations are its threads (agent/chat/remote.py); the sidebar then shows the
server instead of the index, preset and model, which are the server's.

Nothing runs for a session before `access_granted` (agent/chat/access.py): the URL's token and
the handshake's Host and Origin.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import sys
import zlib
from pathlib import Path
from typing import Any

import streamlit as st

from agent.chat import access, render
from agent.chat.remote import RemoteChat, ServerProblem, ask_remote_turn
from agent.chat.session import (
    ChatStore,
    Turn,
    TurnFailed,
    ask_turn,
    default_store_path,
    demo_index_ready,
    index_problem,
    model_problem,
    question_problem,
    start_demo,
)
from agent.chat.steps_web import MODEL_STARTING, STARTING, LiveTimeline, quiet_thread_warnings, show_timeline
from agent.records.progress import build_line, plural

# a citation marker opens its quote inside the sentence it ends (render.with_open_markers)
CITE_STYLE = (
    "<style>.litloop-cite{cursor:pointer;color:#1f6feb;outline:none}"
    ".litloop-cite>.litloop-cite-body{display:none;color:inherit}"
    ".litloop-cite:focus>.litloop-cite-body,.litloop-cite:focus-within>.litloop-cite-body{display:block;"
    "color:#31333f;cursor:text;margin:0.3em 0 0.5em 1em;padding:0.4em 0.6em;border-left:3px solid #1f6feb;"
    "background:rgba(31,111,235,0.06);font-size:0.92em}"
    ".litloop-quote{border-left:3px solid #c9d1d9;padding:0.2em 0.7em;margin:0 0 0.6em 0}</style>"
)

ENDPOINT_HINT = (
    "Check the model endpoint in the sidebar (base URL and model name), or clear the base URL "
    "to use the embedded local model."
)


def settings():
    from agent.settings import default_settings

    return default_settings()


@st.cache_resource(show_spinner=False)
def store_at(path: str) -> ChatStore:
    return ChatStore(Path(path))


@st.cache_resource(show_spinner=False)
def remote_at(url: str, api_key: str | None) -> RemoteChat:
    return RemoteChat(url, api_key)


def remote_chat() -> RemoteChat | None:
    """The server this chat is a client of (LITLOOP_SERVE__URL), or None to run the agent here."""
    serve = settings().serve
    if not serve.url:
        return None
    return remote_at(serve.url, serve.api_key.get_secret_value() if serve.api_key else None)


def md(text: str) -> str:
    """Text shown as Markdown without `$` turning into LaTeX."""
    return str(text).replace("$", "\\$")


# ----------------------------------------------------------------------------- sidebar


def apply_endpoint(base_url: str, model: str, api_key: str = "") -> None:
    """The sidebar's endpoint for this UI process (environment, read by every next model build).
    A typed base URL gets `api_key` (or none), never the configured key: see
    `access.endpoint_environment`."""
    from agent.settings import default_settings

    changed = False
    for var, value in access.endpoint_environment(base_url, model, api_key, access.configured_endpoint()).items():
        if os.environ.get(var) != value:
            if value is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = value
            changed = True
    if changed:
        default_settings.cache_clear()


def endpoint_inputs() -> tuple[str, str, str]:
    """The sidebar's base URL, model and, for a typed base URL only, its own API key."""
    configured = access.configured_endpoint()
    base_url = st.text_input(
        "Base URL", value=configured.base_url or "", key="base_url", placeholder="empty: the embedded local model"
    )
    model = st.text_input("Model", value=configured.model or "", key="model", placeholder="e.g. gpt-4o-mini")
    api_key = ""
    if access.typed_endpoint(base_url, configured):
        api_key = st.text_input(
            "API key for this endpoint",
            type="password",
            key="api_key",
            placeholder="empty: none (a keyless local server)",
            help="A base URL typed here never gets the configured API key; it gets only the key typed here.",
        )
    return base_url, model, api_key


def endpoint_caption(base_url: str, model: str, api_key: str) -> str:
    if not base_url:
        return "Model: the embedded local model"
    if not access.typed_endpoint(base_url, access.configured_endpoint()):
        key = "the configured key"
    else:
        key = "the key typed here" if api_key.strip() else "no key"
    return f"Model: {model or 'default'} at {render.endpoint_host(base_url)} ({key})"


def conversations(store: ChatStore | RemoteChat) -> None:
    """The new-conversation button and the list of conversations."""
    if st.button("New conversation", icon=":material/add:", width="stretch"):
        open_thread(None)
    try:
        threads = store.threads()
    except ServerProblem as exc:
        st.error(md(str(exc)))
        threads = []
    if threads:
        st.caption("Conversations")
    for t in threads[:30]:
        current = t["thread_id"] == st.session_state.get("thread")
        if st.button(
            render.thread_label(t),
            key=f"thread-{t['thread_id']}",
            width="stretch",
            type="primary" if current else "secondary",
            help=plural(t["turns"], "question"),
        ):
            open_thread(t["thread_id"])
            st.rerun()


def open_thread(thread: str | None) -> None:
    """Show conversation `thread` (None: a new one), and name it in the page's address, so that a
    reload opens it again (`reopened_thread`)."""
    st.session_state.thread = thread
    if thread:
        st.query_params["thread"] = thread
    else:
        st.query_params.pop("thread", None)


def reopened_thread(store: ChatStore | RemoteChat) -> None:
    """After a reload (a new session), the conversation the address names, when the store holds
    it for this user; else none."""
    if "thread" in st.session_state:
        return
    wanted = st.query_params.get("thread")
    try:
        known = wanted and any(t["thread_id"] == wanted for t in store.threads())
    except ServerProblem:
        known = False
    open_thread(wanted if known else None)


def server_sidebar(remote: RemoteChat) -> dict[str, Any]:
    """The sidebar of a chat that is a client of a `litloop serve` server."""
    with st.sidebar:
        st.header("litloop")
        conversations(remote)
        st.divider()
        st.subheader("Server")
        st.caption(f"Questions run on {remote.url}, on its index and model; the conversations are its threads.")
    return {"index": None, "preset": None, "corpora": [], "problem": None}


def sidebar(store: ChatStore) -> dict[str, Any]:
    from agent.context import preset_names
    from agent.tracing.tracer import langsmith_status

    s = settings()
    with st.sidebar:
        st.header("litloop")
        conversations(store)

        st.divider()
        st.subheader("Index")
        names = registered_corpora()
        corpora = st.multiselect(
            "Corpora",
            names,
            default=[c for c in launch_corpora() if c in names],
            key="corpora",
            help="Registered corpora to search (several are fused; ids "
            "become CORPUS:ID). Empty: the index folder below.",
        )
        index = os.path.expanduser(
            st.text_input(
                "Index folder",
                value=render.home_path(s.index) if s.index else "",
                key="index",
                placeholder="empty: the demo index",
                help="An index folder (`litloop index build`); empty: LITLOOP_INDEX if set, else the demo index.",
                disabled=bool(corpora),
            ).strip()
        )
        index_msg = None if corpora else index_problem(index or None, s)
        demo_missing = not corpora and not index and s.index is None and not demo_index_ready(s)
        if corpora:
            st.caption("Searching the corpora " + ", ".join(corpora) + " (each is built on first use)")
        elif index_msg:
            st.error(index_msg)
        elif demo_missing:
            st.warning(
                "The demo index is not built yet: **Start the demo** builds it (once, about a minute "
                "and a half on two CPU cores, its progress shown), or the first question will."
            )
        else:
            st.caption(md(f"Searching {render.home_path(index or s.index or s.demo_index)}"))

        st.subheader("Preset")
        preset = st.selectbox(
            "Preset",
            ["auto", *preset_names()],
            key="preset",
            help="auto: `paper` with an endpoint; with the embedded model `local-fast` below 8 CPU threads, else `local` (docs/benchmarks.md).",
        )

        st.subheader("Model endpoint")
        base_url, model, api_key = endpoint_inputs()
        apply_endpoint(base_url, model, api_key)
        model_msg = model_problem()
        if model_msg:
            st.error(model_msg)
        else:
            st.caption(endpoint_caption(base_url, model, api_key))

        if st.button(
            "Start the demo",
            icon=":material/play_arrow:",
            width="stretch",
            help="Build the demo index if needed and start the embedded model.",
        ):
            with st.status("Starting the demo…") as starting:
                try:
                    for line in start_demo(
                        settings(), progress=lambda state: starting.update(label=md(build_line(state)))
                    ):
                        st.success(md(line))
                    starting.update(label="The demo is ready", state="complete")
                except Exception as exc:
                    st.error(f"Could not start the demo: {exc}")

        st.divider()
        ls = langsmith_status()
        tracing = f"Traces: {render.home_path(s.traces_dir)}" if s.tracing.enabled else "Tracing is off"
        st.caption(f"{tracing} · LangSmith: {ls}")
        if ls == "no key":
            st.warning(
                "LANGSMITH_TRACING is on but no LANGSMITH_API_KEY is set: LangChain will try to send runs and fail."
            )
    return {
        "index": None if corpora else index or None,
        "preset": None if preset == "auto" else preset,
        "corpora": corpora,
        "problem": index_msg or model_msg,
    }


def registered_corpora() -> list[str]:
    from tools.registry import REGISTRY

    return sorted(REGISTRY.all())


def launch_corpora() -> list[str]:
    """Corpora given to `litloop ui --corpus NAME` (the app's own arguments after `--`)."""
    args, out = sys.argv[1:], []
    for flag, value in itertools.pairwise(args):
        if flag == "--corpus":
            out.append(value)
    return out


# ----------------------------------------------------------------------------- a turn


def show_answer(answer: dict[str, Any], key: str = "answer") -> None:
    if answer.get("choice"):
        st.markdown(f"**Answer: {md(answer['choice'])}**")
    citations = answer.get("citations") or []
    text = render.answer_markdown(answer)
    # each [n] opens its quote in place (the text escaped first: paper text is data)
    st.markdown(md(render.with_open_markers(text, citations)) if text else "(no answer)", unsafe_allow_html=True)
    rows = render.table_rows_shown(answer)
    if rows:
        st.table(rows)
    papers = render.cited_papers(citations)
    if papers:
        st.markdown(f"**Papers cited** ({len(papers)})")
    for cites in papers:
        paper_card(cites, key)
    if flagged := render.flagged_lines(answer):
        st.markdown(f"**Flagged** ({md(render.FLAGGED_NOTE)})")
        for line in flagged:
            st.markdown("- " + md(line))
    dropped = render.dropped_lines(answer)
    if dropped and st.toggle(
        f"Show {len(dropped)} dropped claim(s)",
        key=f"dropped-{zlib.crc32(answer.get('text', '').encode())}",
        help="Claims the model wrote that the sentences they cite do not support.",
    ):
        for line in dropped:
            st.markdown("- " + md(line))


def paper_card(cites: list[dict[str, Any]], key: str) -> None:
    """One cited paper as a card: its citation numbers and title, its authors, venue and year,
    each citation's place and quoted sentences (the passage around them one click away), and
    its *Cited by* / *References*, which open inside the card."""
    from agent.chat.cites_web import show_links

    first = cites[0]
    with st.container(border=True):
        numbers = " ".join(f"[{c['n']}]" for c in cites)
        st.markdown(f"{numbers} **{md(str(first.get('title') or first.get('paper_id')))}**")
        st.caption(md(" · ".join(x for x in (render.byline(first), f"`{first.get('paper_id')}`") if x)))
        for c in cites:
            st.markdown(f"**[{c['n']}]** Where: {md(render.where(c))}")
            if c.get("quote"):  # the quoted sentences (escaped: paper text is data)
                st.markdown(f"<div class='litloop-quote'>{render.quote_html(c)}</div>", unsafe_allow_html=True)
            with st.expander(f"The passage of [{c['n']}] · chunk {c.get('chunk_id')} ({c.get('kind')})"):
                # the chunk with the quoted sentences highlighted
                st.markdown(f"<div class='litloop-chunk'>{render.highlighted_chunk(c)}</div>", unsafe_allow_html=True)
        show_links(first, key=f"{key}-{first['n']}")  # who cites this paper, what it cites


def show_trace(trace_id: str | None) -> None:
    from agent.chat.trace_view import tree_text
    from agent.tracing.store import TraceNotFound, load_trace

    if not trace_id:
        return
    try:
        records = load_trace(trace_id)
    except (TraceNotFound, OSError):
        st.caption(md(f"trace {render.short_id(trace_id)} is not in {render.home_path(settings().traces_dir)}"))
        return
    with st.expander(f"Trace {render.short_id(trace_id)} · {len(records)} runs"):
        st.code(tree_text(records), language=None)
        st.caption(
            f"`litloop trace show {render.short_id(trace_id)}` prints it in a terminal (`--json` for the raw records)."
        )


def error_text(error: str) -> str:
    if any(
        k in error
        for k in (
            "APIConnectionError",
            "APITimeoutError",
            "ConnectError",
            "NotFoundError",
            "AuthenticationError",
            "ConnectionError",
            "TimeoutError",
            "RateLimitError",
            "reply is not",
        )
    ):
        return f"The model endpoint did not answer: {error}. {ENDPOINT_HINT}"
    return error


def show_status(turn: Turn, status: str | None) -> None:
    """A failed answer as an error, a partial one as a warning, each with its failed calls."""
    errors = turn.totals.get("errors") or []
    line = render.status_line(status, {"failure": turn.totals.get("failure"), **(turn.answer or {})}, errors)
    if line is None:
        return
    text = "\n".join([md(error_text(line)), *(f"- {md(e)}" for e in render.error_lines(errors))])
    (st.error if status == "failed" else st.warning)(text)


def show_turn(turn: Turn) -> None:
    status = turn.totals.get("status") or (turn.answer or {}).get("status")
    with st.chat_message("user"):
        st.markdown(md(turn.question))
        if turn.asked != turn.question:
            st.caption("Asked as a follow-up, with the conversation so far.")
    with st.chat_message("assistant"):
        show_timeline(turn.events, failed=bool(turn.error) or status == "failed")
        if turn.error:
            st.error(md(error_text(turn.error)))
        else:
            show_status(turn, status)
            if status != "failed":
                show_answer(turn.answer, key=turn.graph_thread)
        st.caption(render.totals_line(turn.totals, turn.trace_id))
        show_trace(turn.trace_id)


def ask_live(store: ChatStore | RemoteChat, question: str, options: dict[str, Any]) -> None:
    thread = st.session_state.get("thread") or store.new_thread()
    open_thread(thread)
    with st.chat_message("user"):
        st.markdown(md(question))
    with st.chat_message("assistant"):
        live = LiveTimeline()
        try:
            if not isinstance(store, RemoteChat):
                build_demo_index(live, options)
                start_model(live)
            if isinstance(store, RemoteChat):
                ask_remote_turn(store, thread, question, on_event=live.add)
            else:
                ask_turn(
                    store,
                    thread,
                    question,
                    preset=options["preset"],
                    index=options["index"],
                    on_event=live.add,
                    corpora=options.get("corpora") or None,
                    stream_drafts=True,  # the answer's words as the model writes them
                )
        except TurnFailed:
            pass  # stored with its error; shown by the rerun below
        except (ValueError, ServerProblem) as exc:
            live.done()
            st.error(md(str(exc)))
            return
    st.rerun()


def build_demo_index(live: LiveTimeline, options: dict[str, Any]) -> None:
    """On the first run with the demo index (no index, corpus or LITLOOP_INDEX named), build it
    before the run, its stages and time left shown as the running status (the run would build
    it in its first step, with nothing on the page but that step). A build that fails is logged
    and left to the run, whose error the turn keeps (as `start_model` does)."""
    from tools.corpora.demo import ensure_demo_index

    s = settings()
    if not searches_demo(options.get("index"), options.get("corpora")) or demo_index_ready(s):
        return
    try:
        ensure_demo_index(s, progress=lambda state: live.waiting(build_line(state)))
    except Exception:
        logging.getLogger(__name__).warning("the demo index could not be built before the run", exc_info=True)
    live.waiting(STARTING)


def start_model(live: LiveTimeline) -> None:
    """With the embedded model, start it before the run, as a step of its own on the page (the
    run would start it at its first model call, with nothing on the page saying so). A model
    that cannot start is left to the run, whose error the turn keeps."""
    from agent.llm import backend_of
    from agent.llm.local import LocalModelError, shared_server

    if backend_of(settings().llm) != "local":
        return
    live.waiting(MODEL_STARTING)
    with contextlib.suppress(LocalModelError):
        shared_server(settings())
    live.waiting(STARTING)


# ----------------------------------------------------------------------------- first page


def searches_demo(index: str | None, corpora: Any) -> bool:
    """Whether the chat searches the demo index: no index folder, corpus or LITLOOP_INDEX named."""
    return not index and not corpora and settings().index is None


@st.cache_data(show_spinner=False, ttl=600)
def collection_of(index: str | None, preset: str | None, corpora: tuple[str, ...]) -> dict[str, Any] | None:
    """The collection the chat searches (`agent.api.collection.collection_summary`), or None
    where it cannot be opened yet (the demo index before its first build)."""
    from agent.api import make_run_context
    from agent.api.collection import collection_summary

    if searches_demo(index, corpora) and not demo_index_ready(settings()):
        return None
    try:
        where = {k: v for k, v in {"index": index, "corpora": list(corpora)}.items() if v}
        return collection_summary(make_run_context(preset, **where))
    except Exception:  # the page still works without its description
        logging.getLogger(__name__).warning("could not describe the collection", exc_info=True)
        return None


def welcome(options: dict[str, Any]) -> str | None:
    """An empty conversation's page: what the collection holds and three example questions drawn
    from it, as buttons; the question of the button clicked, or None."""
    about = collection_of(options["index"], options["preset"], tuple(options.get("corpora") or ()))
    if about is None:
        return demo_welcome(options)
    years = (
        f", published {about['years'][0]}–{about['years'][1]} ({about['dated']:,} give a year)"
        if about["years"]
        else ""
    )
    st.markdown(
        f"**{about['papers']:,} papers** in this collection, **{about['full_texts']:,}** with their full text"
        f"{years}. Try one of these:"
    )
    return example_buttons(about["examples"])


def example_buttons(examples: list[str] | tuple[str, ...]) -> str | None:
    """The example questions as buttons; the question of the one clicked, or None."""
    for n, example in enumerate(examples):
        if st.button(example, key=f"example-{n}"):
            return str(example)
    return None


def demo_welcome(options: dict[str, Any]) -> str | None:
    """The first page before the demo index is built: what the demo collection is (from its
    description, no index needed), that the first question builds it, and its example questions;
    a page that searches something else it cannot open yet says only how to ask."""
    from tools.corpora.demo import CORPUS, EXAMPLE_QUESTIONS

    if not searches_demo(options.get("index"), options.get("corpora")):
        st.markdown("Ask a question about the papers in your index.")
        return None
    st.markdown(
        f"**The demo collection**: {md(CORPUS.description)}. Its index is built with the first question "
        "(once, about a minute and a half on two CPU cores, its progress shown). Try one of these:"
    )
    return example_buttons(EXAMPLE_QUESTIONS)


# ----------------------------------------------------------------------------- page


def access_granted() -> bool:
    """Whether this session may use the chat: a Host and Origin of the bound address, and once
    per session the token `litloop ui` printed in the URL (then kept in the session state, so
    the URL stays as it was and a reload works)."""
    problem = access.host_problem(st.context.headers, access.allowed_hosts(st.get_option("server.address")))
    if problem:
        st.error(problem)
        return False
    if st.session_state.get("access_granted"):
        return True
    expected = os.environ.get(access.TOKEN_ENV)
    if not expected:
        st.error(
            "This chat was started without an access token: start it with `litloop ui`, which prints the URL to open."
        )
        return False
    if not access.token_matches(st.query_params.get("token"), expected):
        st.error(
            "This chat needs the URL that `litloop ui` printed when it started (it ends in "
            "`/?token=…`). Open that URL; it is also in the terminal that runs the chat."
        )
        return False
    st.session_state.access_granted = True
    return True


def main() -> None:
    quiet_thread_warnings()
    # an emoji icon is drawn in the page (a material icon is fetched from fonts.gstatic.com)
    st.set_page_config(page_title="litloop", page_icon="📚", layout="wide")
    if not access_granted():
        st.stop()
    remote = remote_chat()
    store: ChatStore | RemoteChat
    if remote is not None:
        reopened_thread(remote)
        store, options = remote, server_sidebar(remote)
    else:
        local = store_at(str(default_store_path(settings())))
        reopened_thread(local)
        store, options = local, sidebar(local)
    st.markdown(CITE_STYLE, unsafe_allow_html=True)
    st.title("litloop")
    st.caption("Questions about the papers in your index, answered with the evidence for each claim.")
    thread = st.session_state.get("thread")
    if thread:
        try:
            for turn in store.turns(thread):
                show_turn(turn)
        except ServerProblem as exc:
            st.error(md(str(exc)))
    picked = welcome(options) if not thread and remote is None and not options["problem"] else None
    question = st.chat_input("Ask about the literature…") or picked
    if question is not None:
        refused = question_problem(question)
        if refused:
            st.warning(refused)
        elif options["problem"]:
            st.error(md(options["problem"]))
        else:
            ask_live(store, question.strip(), options)


main()
