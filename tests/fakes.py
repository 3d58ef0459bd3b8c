"""Project fakes: a scripted chat model that supports structured output.

LangChain's GenericFakeChatModel cannot do `with_structured_output`; graph tests need every node's
LLM call scripted while the real `agent.llm.structured_call` runs unchanged on top.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from operator import itemgetter
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import (
    Runnable,
    RunnableLambda,
    RunnableMap,
    RunnablePassthrough,
)
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, PrivateAttr

# One scripted reply: text as is; a dict, list or pydantic object as JSON; an exception is raised;
# an AIMessage is returned unchanged; a callable gets the messages and returns any of these.
Response = str | dict | list | BaseModel | BaseException | AIMessage | Callable[[list[BaseMessage]], Any]
# A script key: a marker looked for in the system prompt, or a predicate on the whole prompt text.
Key = str | Callable[[str], bool]


class ScriptExhausted(AssertionError):
    """The code under test made more LLM calls than the test scripted."""


@dataclass
class ScriptedCall:
    """One call the model received: the prompt, how output was requested, what it answered."""

    messages: list[BaseMessage]
    key: str | None
    method: str | None
    kwargs: dict[str, Any]
    reply: AIMessage | None = None
    raised: BaseException | None = None

    @property
    def system(self) -> str:
        return next((m.text for m in self.messages if isinstance(m, SystemMessage)), "")

    @property
    def user(self) -> str:
        """The last user message (on a repair turn: the repair prompt)."""
        return next((m.text for m in reversed(self.messages) if m.type == "human"), "")

    @property
    def text(self) -> str:
        return "\n".join(m.text for m in self.messages)


@dataclass
class _Script:
    replies: list[Response]
    cycle: bool = False
    position: int = field(default=0)

    def peek(self) -> Response | None:
        if self.position < len(self.replies):
            return self.replies[self.position]
        return self.replies[0] if self.cycle and self.replies else None

    def next(self, name: str) -> Response:
        if self.position >= len(self.replies):
            if not self.cycle or not self.replies:
                raise ScriptExhausted(f"script {name!r} has no reply left ({self.position} used)")
            self.position = 0
        reply = self.replies[self.position]
        self.position += 1
        return reply


class ScriptedChatModel(BaseChatModel):
    """Replays scripted replies and records every prompt.

    A call that asks for log-probabilities outside structured output (option scoring, the
    support judge) takes the next reply only when that reply is an AIMessage carrying
    `response_metadata["logprobs"]`; otherwise it gets an empty reply without them, as from an
    endpoint that gives none, and the script is left as it was.

    `ScriptedChatModel(responses=[...])` answers calls in order. With a mapping,
    `responses={"decompose": [...], "verify": [...]}`, each call takes the next reply of the first
    key that is a substring of its system prompt (so a prompt file that names its task is
    enough), or whose predicate `key(prompt_text)` is true; `route=fn(messages) -> key` overrides
    the choice. `cycle=True` repeats each list (e.g. a verifier that is never satisfied).

    Token usage is reported as whitespace-separated word counts, so sums are checkable.
    """

    responses: Any = None
    route: Any = None
    cycle: bool = False

    _scripts: dict[Any, _Script] = PrivateAttr(default_factory=dict)
    _calls: list[ScriptedCall] = PrivateAttr(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def model_post_init(self, context: Any, /) -> None:
        super().model_post_init(context)
        responses = self.responses if self.responses is not None else []
        if isinstance(responses, Mapping):
            self._scripts = {k: _Script(list(v), self.cycle) for k, v in responses.items()}
        else:
            self._scripts = {None: _Script(list(responses), self.cycle)}

    @property
    def _llm_type(self) -> str:
        return "scripted"

    # -- what tests read -----------------------------------------------------------------------

    @property
    def calls(self) -> list[ScriptedCall]:
        return list(self._calls)

    def calls_for(self, key: str) -> list[ScriptedCall]:
        return [c for c in self._calls if c.key == key]

    def remaining(self, key: Key | None = None) -> int:
        script = self._scripts[key]
        return len(script.replies) - script.position

    # -- chat model protocol -------------------------------------------------------------------

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        with self._lock:  # parallel nodes (read_paper) call one shared model
            key = self._pick(messages)
            script = self._scripts[key]
            if kwargs.get("logprobs") and not kwargs.get("scripted_method") and not _has_logprobs(script.peek()):
                # a one-token probe (option scoring, the support judge) the script did not plan
                # for: answered as an endpoint without log-probabilities answers, script untouched
                words = sum(_words(m.text) for m in messages)
                message = AIMessage(
                    content="", usage_metadata={"input_tokens": words, "output_tokens": 0, "total_tokens": words}
                )
                self._calls.append(ScriptedCall(list(messages), _key_name(key), None, kwargs, reply=message))
                return ChatResult(generations=[ChatGeneration(message=message)])
            reply = script.next(_key_name(key))
            call = ScriptedCall(list(messages), _key_name(key), kwargs.get("scripted_method"), kwargs)
            self._calls.append(call)
        if callable(reply) and not isinstance(reply, (BaseModel, BaseException)):
            reply = reply(list(messages))
        if isinstance(reply, BaseException):
            call.raised = reply
            raise reply
        message = _to_message(reply, messages, kwargs)
        call.reply = message
        return ChatResult(generations=[ChatGeneration(message=message)])

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any) -> Runnable:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], tool_choice=tool_choice, **kwargs)

    def with_structured_output(
        self,
        schema: dict | type | None = None,
        *,
        method: str = "json_schema",
        include_raw: bool = False,
        strict: bool | None = None,
        **kwargs: Any,
    ) -> Runnable:
        """The same shape as ChatOpenAI's: `{"raw", "parsed", "parsing_error"}` with include_raw."""
        if schema is None:
            raise ValueError("schema must be given")
        tool = convert_to_openai_tool(schema)["function"]
        llm = self.bind(
            scripted_method=method, scripted_tool=tool["name"], scripted_schema=tool["parameters"], **kwargs
        )
        parser = RunnableLambda(partial(_parse_structured, schema=schema))
        if not include_raw:
            return llm | parser
        parsed = RunnablePassthrough.assign(parsed=itemgetter("raw") | parser, parsing_error=lambda _: None)
        fallback = RunnablePassthrough.assign(parsed=lambda _: None)
        return RunnableMap(raw=llm) | parsed.with_fallbacks([fallback], exception_key="parsing_error")

    # -- internals -----------------------------------------------------------------------------

    def _pick(self, messages: list[BaseMessage]) -> Any:
        if None in self._scripts:
            return None
        if self.route is not None:
            key = self.route(messages)
            if key not in self._scripts:
                raise ScriptExhausted(f"route chose {key!r}, which has no script")
            return key
        system = next((m.text for m in messages if isinstance(m, SystemMessage)), "")
        text = "\n".join(m.text for m in messages)
        for key in self._scripts:
            if (key in system) if isinstance(key, str) else key(text):
                return key
        raise ScriptExhausted(
            f"no script key matches this prompt (keys: {[_key_name(k) for k in self._scripts]}); "
            f"system prompt starts: {system[:120]!r}"
        )


def _has_logprobs(reply: Any) -> bool:
    return isinstance(reply, AIMessage) and bool((reply.response_metadata or {}).get("logprobs"))


def _key_name(key: Any) -> str | None:
    if key is None or isinstance(key, str):
        return key
    return getattr(key, "__name__", repr(key))


def _words(text: str) -> int:
    return len(text.split())


def _to_message(reply: Any, messages: list[BaseMessage], kwargs: dict[str, Any]) -> AIMessage:
    if isinstance(reply, AIMessage):
        return reply
    if isinstance(reply, BaseModel):
        text = reply.model_dump_json()
    elif isinstance(reply, (dict, list)):
        text = json.dumps(reply)
    else:
        text = str(reply)
    usage = {
        "input_tokens": sum(_words(m.text) for m in messages),
        "output_tokens": _words(text),
    }
    usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
    if kwargs.get("scripted_method") == "function_calling" and isinstance(reply, (dict, BaseModel)):
        args = json.loads(text)
        name = kwargs.get("scripted_tool", "output")
        call = {"name": name, "args": args, "id": "call_1", "type": "tool_call"}
        return AIMessage(content="", tool_calls=[call], usage_metadata=usage)
    return AIMessage(content=text, usage_metadata=usage)


def _parse_structured(message: AIMessage, schema: dict | type) -> Any:
    """What ChatOpenAI's parsers return: the schema's object for a class, a dict otherwise."""
    if message.tool_calls:
        data: Any = message.tool_calls[0]["args"]
    else:
        data = json.loads(message.text)
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema.model_validate(data)
    return data
