"""The web chat as a client of a `litloop serve` server (`litloop ui --server URL`), through
langgraph-sdk: the questions run on the server (its index, its model, its queue) and the
conversations are its threads, so a team shares them.

As in the local chat (agent/chat/session.py), every question is one run on a fresh graph
thread, so each starts from a clean state; a conversation is the server threads whose metadata
name it (`chat`, with the turn number `turn`). The thread's metadata also keeps what the step
timeline replays (the progress events, `events`) and the totals, written when the run ends.
With per-user keys the server stamps each thread with its owner, so a user lists only its own.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

from agent.chat.session import Turn, TurnFailed, _storable, contextualise, title_of, totals_of

log = logging.getLogger(__name__)
SOURCE = "litloop-ui"  # the metadata that marks the web chat's threads on the server
GRAPH_ID = "litloop"


class ServerProblem(RuntimeError):
    """The server did not answer as expected (down, a refused key, a full queue); says what to do."""


def _problem(url: str, exc: Exception) -> ServerProblem:
    status = getattr(getattr(exc, "response", None), "status_code", None)
    if status == 401:
        return ServerProblem(f"the server at {url} refused the key: set LITLOOP_SERVE__API_KEY to a key it knows")
    if status == 429:
        return ServerProblem(f"the server at {url} is busy: {exc.response.text}")  # type: ignore[attr-defined]
    return ServerProblem(f"the litloop server at {url} did not answer ({type(exc).__name__}: {exc})")


class RemoteChat:
    """Conversations on a `litloop serve` server, with the local ChatStore's reading methods."""

    def __init__(self, url: str, api_key: str | None = None) -> None:
        from langgraph_sdk import get_sync_client

        self.url = url.rstrip("/")
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else None
        self.client = get_sync_client(url=self.url, headers=headers)

    def _threads(self, metadata: dict[str, Any], limit: int = 500, **kw: Any) -> list[dict[str, Any]]:
        try:
            found = self.client.threads.search(metadata={"source": SOURCE, **metadata}, limit=limit, **kw)
            return [dict(t) for t in found]
        except Exception as exc:
            raise _problem(self.url, exc) from exc

    def new_thread(self) -> str:
        return uuid.uuid4().hex[:12]  # the conversation exists on the server with its first turn

    def threads(self, limit: int = 100) -> list[dict[str, Any]]:
        """Conversations, most recently used first, with their number of turns."""
        chats: dict[str, dict[str, Any]] = {}
        for t in self._threads({}, select=["thread_id", "metadata", "updated_at"]):
            meta = t.get("metadata") or {}
            chat = chats.setdefault(
                str(meta.get("chat")), {"thread_id": str(meta.get("chat")), "title": "", "turns": 0, "updated": ""}
            )
            chat["turns"] += 1
            if meta.get("turn") == 1:
                chat["title"] = meta.get("title", "")
            chat["updated"] = max(chat["updated"], str(t.get("updated_at") or ""))
        return sorted(chats.values(), key=lambda c: c["updated"], reverse=True)[:limit]

    def turns(self, thread_id: str, *, with_answers: bool = True) -> list[Turn]:
        out = []
        for t in sorted(self._threads({"chat": thread_id}), key=lambda t: int(t["metadata"].get("turn", 0))):
            meta = t["metadata"]
            turn = Turn(
                thread_id=thread_id,
                n=int(meta.get("turn", 0)),
                question=str(meta.get("question", "")),
                asked=str(meta.get("asked", meta.get("question", ""))),
                graph_thread=str(t["thread_id"]),
                events=list(meta.get("events") or []),
                totals=dict(meta.get("totals") or {}),
                error=meta.get("error"),
            )
            if with_answers and not turn.error:
                turn.answer = dict((t.get("values") or {}).get("answer") or {})
            out.append(turn)
        return out


def ask_remote_turn(
    chat: RemoteChat,
    thread_id: str,
    question: str,
    *,
    on_event: Callable[[dict[str, Any]], None] | None = None,
) -> Turn:
    """Ask `question` in a conversation on the server: contextualise, one streamed run on a new
    server thread, the steps to `on_event` as they arrive. Raises `TurnFailed` (with the turn,
    kept on the server) when the run fails, `ServerProblem` when the server refuses it."""
    from agent.api import draft_event, events_of
    from agent.context import make_context

    if not question or not question.strip():
        raise ValueError("the question is empty")
    history = chat.turns(thread_id)
    asked = contextualise(question, history)
    n = (history[-1].n if history else 0) + 1
    meta = {"source": SOURCE, "chat": thread_id, "turn": n, "question": question.strip(), "asked": asked}
    try:
        created = chat.client.threads.create(metadata={**meta, "title": title_of(question)})
    except Exception as exc:
        raise _problem(chat.url, exc) from exc
    turn = Turn(thread_id=thread_id, n=n, question=question.strip(), asked=asked, graph_thread=created["thread_id"])
    ctx = make_context("paper")  # for the round count the timeline shows; the server's own decides the run
    rounds, started, error = 0, time.perf_counter(), None
    try:
        for part in chat.client.runs.stream(
            turn.graph_thread,
            GRAPH_ID,
            input={"question": asked},
            stream_mode=["updates", "custom"],
            context={"stream_drafts": True},  # the answer's words as the model writes them
        ):
            if part.event == "error":
                error = str((part.data or {}).get("message") or part.data)
            if part.event == "custom":
                if on_event is not None and (draft := draft_event(part.data)) is not None:
                    on_event(draft)  # shown while written, not kept
                continue
            if part.event != "updates" or not isinstance(part.data, dict):
                continue
            for node, update in part.data.items():
                rounds += node == "decompose"
                if isinstance(update, dict):
                    for ev in events_of(node, update, rounds, ctx):
                        turn.events.append(_storable(ev))
                        if on_event is not None:
                            on_event(ev)
        state = chat.client.threads.get_state(turn.graph_thread)["values"]
        values: dict[str, Any] = state if isinstance(state, dict) else {}
    except Exception as exc:
        problem = _problem(chat.url, exc)
        if getattr(getattr(exc, "response", None), "status_code", None) in (401, 429):
            try:  # refused before it ran: no turn to keep
                chat.client.threads.delete(turn.graph_thread)
            except Exception as gone:
                log.warning("could not delete the refused turn's thread %s: %s", turn.graph_thread, gone)
            raise problem from exc
        error, values = str(problem), {}
    answer = dict(values.get("answer") or {})
    turn.totals = totals_of(
        {
            "rounds": values.get("round", 0),
            "usage": values.get("usage") or {},
            "errors": values.get("errors", []),
            "status": answer.get("status") or ("partial" if values.get("errors") else "ok"),
            "answer": answer,
        }
    )
    turn.totals["seconds"] = round(time.perf_counter() - started, 2)
    turn.error, turn.answer = error, answer
    try:
        chat.client.threads.update(
            turn.graph_thread, metadata={**meta, "events": turn.events, "totals": turn.totals, "error": error}
        )
    except Exception as exc:
        raise _problem(chat.url, exc) from exc
    if error:
        raise TurnFailed(turn, RuntimeError(error))
    return turn
