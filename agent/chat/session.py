"""Chat threads and turns, shared by the web chat and the terminal chat.

A thread (one conversation) is a list of turns; every turn is one run of the unchanged graph.
Each turn gets its own LangGraph thread id, `<thread>:<n>`, checkpointed by LangGraph's SQLite
checkpointer in `data_dir/chat/chats.sqlite`: the agent's state belongs to one question (its round
counter, evidence pool and usage accumulate within a run, and the router caps rounds on that
counter), so every question starts from a clean state, and its final checkpoint keeps the answer,
citations and readings across restarts. A small table in the same file lists the threads and
their turns: the question as typed, the question as sent to the graph, the trace id, the progress
events (to replay the step timeline) and the totals.

Follow-up questions ("and which of them use a CRF?") use the conversation through
`contextualise`, a deterministic rewrite with no extra LLM call: the new question comes first,
then a short block with the last `FOLLOW_UP_TURNS` answered turns (question, answer without its
citation markers, the papers it cited). Every node sees that block inside the question (decompose
resolves "them" from it; read_paper's BM25 picks up its terms); the graph's nodes are unchanged.
"""

from __future__ import annotations

import json
import logging
import re
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from agent.records.progress import FOLLOW_UP_HEADER

if TYPE_CHECKING:
    from agent.settings import Settings
    from tools.index.layout import Progress

log = logging.getLogger(__name__)

FOLLOW_UP_TURNS = 2  # earlier turns shown to a follow-up: enough for "them", short for a 1.5B model
FOLLOW_UP_QUESTION_CHARS = 300
FOLLOW_UP_ANSWER_CHARS = 400
FOLLOW_UP_PAPERS = 5
# "exit" checkpoints a chat turn once, when it ends, instead of after every node (each
# checkpoint holds the whole state, pool included).
DURABILITY: Literal["exit"] = "exit"
_MARKER = re.compile(r"\s*\[\d+(?:\s*,\s*\d+)*\]")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS litloop_threads (
    thread_id TEXT PRIMARY KEY, title TEXT NOT NULL DEFAULT '', created REAL, updated REAL);
CREATE TABLE IF NOT EXISTS litloop_turns (
    thread_id TEXT NOT NULL, n INTEGER NOT NULL, question TEXT NOT NULL, asked TEXT NOT NULL,
    graph_thread TEXT NOT NULL, trace_id TEXT, events TEXT NOT NULL DEFAULT '[]',
    totals TEXT NOT NULL DEFAULT '{}', error TEXT, created REAL, PRIMARY KEY (thread_id, n));
"""


@dataclass
class Turn:
    """One question and its answer in a thread."""

    thread_id: str
    n: int
    question: str  # as typed
    asked: str  # as sent to the graph (with the conversation for a follow-up)
    graph_thread: str
    trace_id: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    totals: dict[str, Any] = field(default_factory=dict)  # usage, rounds, preset, errors, status, failure
    error: str | None = None
    created: float = 0.0
    answer: dict[str, Any] = field(default_factory=dict)  # from the checkpoint


class TurnFailed(RuntimeError):
    """The graph run of a turn raised; the turn is stored with the error and its trace id."""

    def __init__(self, turn: Turn, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.turn = turn
        self.cause = cause


def default_store_path(settings: Settings | None = None) -> Path:
    if settings is None:
        from agent.settings import default_settings

        settings = default_settings()
    return settings.data_dir / "chat" / "chats.sqlite"


class ChatStore:
    """Threads and turns in one SQLite file, next to LangGraph's checkpoints of each turn."""

    def __init__(self, path: Path | str | None = None, settings: Settings | None = None) -> None:
        self.settings = settings
        self.path = Path(path) if path is not None else default_store_path(settings)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
        self._conn.row_factory = sqlite3.Row
        with self._lock, self._conn:
            self._conn.executescript(_SCHEMA)
        self._saver: Any = None
        self._graph = None

    # -- LangGraph side ------------------------------------------------------------------------

    @property
    def checkpointer(self):
        with self._lock:
            if self._saver is None:
                from agent.serve.checkpoint import open_checkpointer

                # SQLite: this file; Postgres when LITLOOP_CHECKPOINT__URL is set (agent/serve/checkpoint.py)
                self._saver = open_checkpointer(self.settings, sqlite_path=self.path)
            return self._saver.saver

    def graph(self):
        """The agent's graph (same nodes and edges) compiled with this store's checkpointer."""
        with self._lock:
            if self._graph is None:
                from agent.api import build_graph

                self._graph = build_graph(checkpointer=self.checkpointer)
            return self._graph

    def final_state(self, graph_thread: str) -> dict[str, Any]:
        snapshot = self.graph().get_state({"configurable": {"thread_id": graph_thread}})
        return dict(snapshot.values or {})

    # -- threads -------------------------------------------------------------------------------

    def new_thread(self, title: str = "") -> str:
        thread_id = uuid.uuid4().hex[:12]
        now = time.time()
        with self._lock, self._conn:
            self._conn.execute("INSERT INTO litloop_threads VALUES (?, ?, ?, ?)", (thread_id, title, now, now))
        return thread_id

    def threads(self, limit: int = 100) -> list[dict[str, Any]]:
        """Threads, most recently used first, with their number of turns."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT t.thread_id, t.title, t.created, t.updated, COUNT(u.n) AS turns FROM litloop_threads t "
                "LEFT JOIN litloop_turns u ON u.thread_id = t.thread_id GROUP BY t.thread_id "
                "ORDER BY t.updated DESC LIMIT ?",
                (limit,),
            ).fetchall()
        return [dict(r) for r in rows]

    def thread(self, thread_id: str) -> dict[str, Any] | None:
        """A thread by id or a unique start of it."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT * FROM litloop_threads WHERE thread_id LIKE ? LIMIT 2", (thread_id.replace("%", "") + "%",)
            ).fetchall()
        return dict(rows[0]) if len(rows) == 1 else None

    def delete_thread(self, thread_id: str) -> None:
        turns = self.turns(thread_id, with_answers=False)
        for t in turns:
            try:
                self.checkpointer.delete_thread(t.graph_thread)
            except Exception as exc:
                log.warning("could not delete checkpoints of %s: %s", t.graph_thread, exc)
        with self._lock, self._conn:
            self._conn.execute("DELETE FROM litloop_turns WHERE thread_id = ?", (thread_id,))
            self._conn.execute("DELETE FROM litloop_threads WHERE thread_id = ?", (thread_id,))

    # -- turns ---------------------------------------------------------------------------------

    def turns(self, thread_id: str, *, with_answers: bool = True) -> list[Turn]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT * FROM litloop_turns WHERE thread_id = ? ORDER BY n", (thread_id,)
            ).fetchall()
        out = []
        for r in rows:
            turn = Turn(
                thread_id=r["thread_id"],
                n=r["n"],
                question=r["question"],
                asked=r["asked"],
                graph_thread=r["graph_thread"],
                trace_id=r["trace_id"],
                events=json.loads(r["events"]),
                totals=json.loads(r["totals"]),
                error=r["error"],
                created=r["created"],
            )
            if with_answers and not turn.error:
                try:
                    turn.answer = self.final_state(turn.graph_thread).get("answer") or {}
                except Exception as exc:
                    log.warning("could not read the checkpoint of %s: %s", turn.graph_thread, exc)
            out.append(turn)
        return out

    def add_turn(self, turn: Turn) -> Turn:
        now = time.time()
        turn.created = turn.created or now
        with self._lock, self._conn:
            self._conn.execute(
                "INSERT OR REPLACE INTO litloop_turns VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    turn.thread_id,
                    turn.n,
                    turn.question,
                    turn.asked,
                    turn.graph_thread,
                    turn.trace_id,
                    json.dumps(turn.events, default=str),
                    json.dumps(turn.totals, default=str),
                    turn.error,
                    turn.created,
                ),
            )
            self._conn.execute("INSERT OR IGNORE INTO litloop_threads VALUES (?, '', ?, ?)", (turn.thread_id, now, now))
            self._conn.execute(
                "UPDATE litloop_threads SET updated = ?, title = CASE WHEN title = '' THEN ? ELSE title END "
                "WHERE thread_id = ?",
                (now, title_of(turn.question), turn.thread_id),
            )
        return turn

    def close(self) -> None:
        with self._lock:
            self._conn.close()
            if self._saver is not None:
                self._saver.close()


def title_of(question: str, limit: int = 60) -> str:
    q = " ".join(question.split())
    return q if len(q) <= limit else q[: limit - 1] + "…"


def _cut(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# what makes a question lean on the conversation: it opens by continuing it ("and for X?", "what
# about ...", "same for ..."), points back with a pronoun or a determiner and a noun ("which of
# them", "that paper", "those results"), picks from a list ("the second one", "the latter"), or
# names what was said ("you mentioned", "above", "earlier")
_CONTINUES = re.compile(
    r"^\s*(?:and|but|also|so|then|or|now|plus|what\s+about|how\s+about|same\s+(?:for|question|with)|likewise)\b",
    re.IGNORECASE,
)
_POINTS_BACK = re.compile(
    r"\b(?:they|them|their|theirs|themselves|he|she|him|his|hers)\b"
    r"|\b(?:these|those|this|that|such)\s+(?:\w+\s+)?(?:papers?|ones?|works?|studies|study|articles?|methods?|models?"
    r"|approach(?:es)?|results?|authors?|datasets?|corpora|corpus|findings?|numbers?|figures?|claims?|answers?|tables?"
    r"|systems?|tools?|techniques?|values?|scores?|experiments?|benchmarks?)\b"
    r"|\b(?:the|that)\s+(?:first|second|third|fourth|fifth|last|latter|former|other|previous|above|same)\b"
    r"|\b(?:you|your\s+answer)\s+(?:just\s+)?(?:mentioned|said|cited|listed|found|named|gave|quoted|showed)\b"
    r"|\b(?:above|earlier|previously|aforementioned)\b|\b(?:of|among|between|from)\s+(?:these|those|them)\b"
    r"|^\s*(?:why|how|where|really|which\s+one|next|more|continue|go\s+on|elaborate|tell\s+me\s+more"
    r"|anything\s+else|any\s+others?|others?)\s*[?.!]*\s*$",
    re.IGNORECASE,
)
# "it" points back unless it is the empty subject of "is it true that", "it is known that"
_IT = re.compile(r"\b(?:it|its|it's)\b", re.IGNORECASE)
_EMPTY_IT = re.compile(
    r"\b(?:is|was)\s+it\s+(?:true|possible|correct|right|wrong|the\s+case|known|better|worth|fair|likely)\b"
    r"|\bit(?:'s|\s+is|\s+was)\s+(?:\w+\s+){0,2}?(?:that|to|whether)\b",
    re.IGNORECASE,
)


def refers_back(question: str) -> bool:
    """Whether a question leans on the conversation before it (`_CONTINUES`, `_POINTS_BACK`, a
    pronoun "it" that is not an empty subject): only such a question is asked with the earlier
    turns; one that stands alone is answered alone."""
    q = question or ""
    if _CONTINUES.search(q) or _POINTS_BACK.search(q):
        return True
    return bool(_IT.search(_EMPTY_IT.sub(" ", q)))


QUESTION_CHARS = 2000  # the longest question a chat takes (a paragraph of context fits; a paper does not)


def question_problem(question: str, limit: int = QUESTION_CHARS) -> str | None:
    """Why a chat refuses a question before it runs, or None: no words, or more than `limit`
    characters (the message names the limit)."""
    text = (question or "").strip()
    if not text:
        return "Type a question first: an empty or blank question is not sent."
    if len(text) > limit:
        return (
            f"A question may have at most {limit:,} characters; this one has {len(text):,}. Shorten it and ask again."
        )
    return None


def contextualise(question: str, history: list[Turn], max_turns: int = FOLLOW_UP_TURNS) -> str:
    """The question the graph gets: as typed for a thread's first question and for one that
    stands alone (`refers_back`); for a follow-up that refers back, followed by the last answered
    turns (question, answer without [n] markers, cited papers)."""
    answered = [t for t in history if not t.error and (t.answer or {}).get("text")][-max_turns:]
    if not answered or not refers_back(question):
        return question
    lines = []
    for t in answered:
        lines.append(f"Q: {_cut(t.question, FOLLOW_UP_QUESTION_CHARS)}")
        lines.append(f"A: {_cut(_MARKER.sub('', t.answer['text']), FOLLOW_UP_ANSWER_CHARS)}")
        papers = list(dict.fromkeys((c.get("paper_id"), c.get("title") or "") for c in t.answer.get("citations", [])))
        if papers:
            lines.append(
                "Papers cited: "
                + "; ".join(
                    f"{_cut(title, 100)} ({pid})" if title else str(pid) for pid, title in papers[:FOLLOW_UP_PAPERS]
                )
            )
    return f"{question.strip()}\n\n{FOLLOW_UP_HEADER}\n" + "\n".join(lines)


def _storable(ev: dict[str, Any]) -> dict[str, Any]:
    """A progress event as kept for replay: the answer itself lives in the checkpoint, so only
    what the timeline shows of it is kept (its status, why it failed, its citations' ids)."""
    out = {k: v for k, v in ev.items() if k != "answer"}
    if isinstance(ev.get("answer"), dict):
        answer = ev["answer"]
        out["answer"] = {
            "status": answer.get("status"),
            "failure": answer.get("failure"),
            "insufficient_evidence": answer.get("insufficient_evidence"),
            "citations": [c.get("chunk_id") for c in answer.get("citations") or []],
        }
    return out


def totals_of(result: dict[str, Any]) -> dict[str, Any]:
    usage = result.get("usage") or {}
    return {
        "rounds": result.get("rounds", 0),
        "preset": result.get("preset"),
        "llm_calls": int(usage.get("llm_calls", 0)),
        "input_tokens": int(usage.get("input_tokens", 0)),
        "output_tokens": int(usage.get("output_tokens", 0)),
        "seconds": round(usage.get("seconds_total", 0.0), 2),
        "errors": result.get("errors", []),
        "status": result.get("status", "ok"),
        "failure": (result.get("answer") or {}).get("failure"),
    }


def ask_turn(
    store: ChatStore,
    thread_id: str,
    question: str,
    *,
    preset: str | None = None,
    index: str | None = None,
    on_event: Callable[[dict[str, Any]], None] | None = None,
    **context_overrides: Any,
) -> Turn:
    """Ask `question` in a thread: contextualise, run the graph with the checkpointer and a
    tracer, store the turn. Raises `TurnFailed` (with the stored turn) when the run raises."""
    from agent.api import ask
    from agent.tracing.tracer import make_tracer

    if not question or not question.strip():
        raise ValueError("the question is empty")
    history = store.turns(thread_id)
    asked = contextualise(question, history)
    n = (history[-1].n if history else 0) + 1
    turn = Turn(thread_id=thread_id, n=n, question=question.strip(), asked=asked, graph_thread=f"{thread_id}:{n}")

    def record(ev: dict[str, Any]) -> None:
        if ev.get("node") != "draft":  # the answer's words while written: shown, not kept
            turn.events.append(_storable(ev))
        if on_event is not None:
            on_event(ev)

    tracer = make_tracer(thread_id=turn.graph_thread)
    config: dict[str, Any] = {"metadata": {"chat_thread": thread_id, "turn": n}}
    if tracer is not None:
        config["callbacks"] = [tracer]
    started = time.perf_counter()
    try:
        result = ask(
            asked,
            preset=preset,
            index=index,
            on_event=record,
            graph=store.graph(),
            thread_id=turn.graph_thread,
            config=config,
            durability=DURABILITY,
            **context_overrides,
        )
    except Exception as exc:
        turn.error = f"{type(exc).__name__}: {exc}"
        turn.trace_id = tracer.trace_id if tracer is not None else None
        turn.totals = {"seconds": round(time.perf_counter() - started, 2), "preset": preset}
        store.add_turn(turn)
        raise TurnFailed(turn, exc) from exc
    turn.trace_id = result.get("trace_id")
    turn.totals = totals_of(result)
    turn.answer = result.get("answer") or {}
    return store.add_turn(turn)


def model_problem(settings: Settings | None = None) -> str | None:
    """Why no chat model can answer, or None: the local model's parts and runtime are checked
    without starting it; an endpoint needs a model name (reachability shows on the first call)."""
    from agent.llm import backend_of

    if settings is None:
        from agent.settings import default_settings

        settings = default_settings()
    llm = settings.llm
    backend = backend_of(llm)
    if backend == "openai" and not llm.model:
        return f"LITLOOP_LLM__BASE_URL is set ({llm.base_url}) but no model is named: set LITLOOP_LLM__MODEL."
    if backend == "azure" and not (llm.azure_deployment or llm.model):
        return "LITLOOP_LLM__AZURE_ENDPOINT is set but no deployment is named: set LITLOOP_LLM__AZURE_DEPLOYMENT."
    if backend != "local":
        return None
    from agent.llm.local import (
        MODEL_FILENAME,
        LocalModelError,
        find_part_files,
        require_runtime,
    )

    try:
        require_runtime()
        given = llm.local_model_path
        if given is not None and not given.is_file():
            return f"LITLOOP_LLM__LOCAL_MODEL_PATH points at {given}, which is not a file."
        if given is None and not (settings.data_dir / "models" / MODEL_FILENAME).is_file():
            find_part_files()  # not assembled yet: the parts must be installed
    except LocalModelError as exc:
        return str(exc)
    return None


def index_problem(index: str | Path | None, settings: Settings | None = None) -> str | None:
    """Why the index cannot be searched, or None. The demo index counts as fine when absent:
    it is built on first use (or with the chat's start-the-demo button)."""
    if settings is None:
        from agent.settings import default_settings

        settings = default_settings()
    path = Path(index) if index else settings.index
    if path is None:
        return None
    if not (path / "CURRENT").exists():
        return (
            f"No litloop index at {path}. Build one with `litloop index build FILES --index {path}`, "
            "or leave the index empty to use the demo index."
        )
    return None


def demo_index_ready(settings: Settings | None = None) -> bool:
    if settings is None:
        from agent.settings import default_settings

        settings = default_settings()
    return (settings.demo_index / "CURRENT").exists()


def start_demo(settings: Settings | None = None, *, with_model: bool = True, progress: Progress = False) -> list[str]:
    """Build the demo index if needed and, with the embedded model, start its server; returns
    what was done, one line each (the chats' 'start the demo' action). `progress`: the build's,
    as `tools.index.layout.Progress`."""
    from agent.llm import backend_of
    from tools.corpora.demo import ensure_demo_index

    if settings is None:
        from agent.settings import default_settings

        settings = default_settings()
    done = []
    was_ready = demo_index_ready(settings)
    path = ensure_demo_index(settings, progress=progress)
    from agent.chat.render import home_path

    done.append(f"demo index {'ready' if was_ready else 'built'} at {home_path(path)}")
    if with_model and backend_of(settings.llm) == "local":
        from agent.llm.local import shared_server

        shared_server(settings)
        done.append("embedded model: ready")
    return done
