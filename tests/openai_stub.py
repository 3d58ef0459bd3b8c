"""A tiny OpenAI-compatible chat-completions server for tests that run litloop as a separate
process (the browser test): it answers `POST /v1/chat/completions` with scripted JSON, chosen by
the structured-output schema the request names (decompose, verify, read, synthesize), on
127.0.0.1 only. Every request is recorded.

Usage: `with OpenAIStub(reply) as stub: env["LITLOOP_LLM__BASE_URL"] = stub.base_url`; `reply`
gets (role, request body, prompt text) and returns a dict (sent as the JSON content).

Endpoint faults, for every call (`faults={"*": "html"}`) or a role's (`faults={"read": "hang"}`):
`429` (with `Retry-After: retry_after`), `401`, `hang` (no reply until the client gives up or the
stub stops), `reset` (the connection reset), `html` (200 text/html), `invalid_json` (200
application/json that does not parse), `prose` (a well-formed completion whose content is prose,
not JSON). `refused_url()` is a base URL where nothing listens.
"""

from __future__ import annotations

import json
import re
import socket
import struct
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = Callable[[str, dict[str, Any], str], dict[str, Any]]

# Which node asks: the properties of the JSON schema in response_format (or tool) it sends.
_ROLE_BY_FIELD = (
    ("value", "copy"),
    ("subqueries", "decompose"),
    ("evidence_papers", "verify"),
    ("relevant", "read"),
    ("claims", "synthesize"),
)
SENTENCE = re.compile(r"^(S\d+) (.*)$", re.MULTILINE)


def ids_with(prompt: str, fragment: str) -> list[str]:
    """The numbered sentences (S1, S2, ...) of the prompt whose text contains `fragment`."""
    return [sid for sid, text in SENTENCE.findall(prompt) if fragment in text]


FAULTS = ("429", "401", "hang", "reset", "html", "invalid_json", "prose")
PROSE = "Sure! Conditional random fields are a popular model for sequence labelling."
HTML = b"<!doctype html><html><head><title>Welcome</title></head><body>It works!</body></html>"


def refused_url() -> str:
    """A loopback base URL where nothing listens (a port just bound and released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def role_of(body: dict[str, Any], prompt: str) -> str:
    fmt = body.get("response_format") or {}
    schema = (fmt.get("json_schema") or {}).get("schema") or {}
    if not schema and body.get("tools"):
        schema = body["tools"][0].get("function", {}).get("parameters", {})
    props = set((schema.get("properties") or {}).keys())
    for field, role in _ROLE_BY_FIELD:
        if field in props:
            return role
    if "Split the question" in prompt or "subqueries" in prompt:
        return "decompose"
    return "unknown"


def copied_value(body: dict[str, Any], fragment: str) -> str:
    """The first value of the copy step's enum (the offered sentences' word spans) that holds
    `fragment`, else its first value."""
    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}
    if not schema and body.get("tools"):
        schema = body["tools"][0].get("function", {}).get("parameters", {})
    values = ((schema.get("properties") or {}).get("value") or {}).get("enum") or [""]
    return next((v for v in values if fragment in v), values[0])


def literature_reply(role: str, body: dict[str, Any], prompt: str) -> dict[str, Any]:
    """Plausible answers about the CRF papers of the tests' small corpus."""
    if role == "copy":
        value = copied_value(body, "95.7")
        return {"value": value, "claim": f"Conditional random fields reach {value} on chunking."}
    if role == "decompose":
        return {"subqueries": ["conditional random fields sequence labeling F1", "CRF layer neural tagger"]}
    if role == "verify":
        papers = re.findall(r"PAPER (\S+):", prompt)
        return {"evidence_papers": [p for p in papers if p in ("crf", "lstm")], "sufficient": True, "missing": ""}
    if role == "read":
        paper = re.search(r"PAPER (\S+):", prompt)
        relevant = paper is not None and paper.group(1) in ("crf", "lstm")
        ids = (ids_with(prompt, "95.7") + ids_with(prompt, "90.9"))[:1] if relevant else []
        return {"sentences": ids, "relevant": relevant}
    if role == "synthesize":
        claims = [
            {"text": "Conditional random fields reach 95.7 F1 on chunking.", "sentences": ids_with(prompt, "95.7")[:1]}
        ]
        if ids_with(prompt, "90.9"):
            claims.append(
                {
                    "text": "A BiLSTM with a CRF layer reaches 90.9 F1 on CoNLL-2003 NER.",
                    "sentences": ids_with(prompt, "90.9")[:1],
                }
            )
        out = {"claims": claims, "insufficient_evidence": False}
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}
        if "choice" in (schema.get("properties") or {}):
            out["choice"] = schema["properties"]["choice"]["enum"][0]
        return out
    return {}


SPECTER = "2020.acl-main.207"  # the demo corpus's SPECTER paper (tools/corpora/demo_data/pdfs)


def demo_reply(role: str, body: dict[str, Any], prompt: str) -> dict[str, Any]:
    """Answers about the demo corpus's SPECTER paper, for the demo question (agent.cli.main.DEMO_QUESTION):
    SPECTER is the evidence when it was retrieved, and each claim cites its sentences on citations."""
    if role == "copy":
        value = copied_value(body, "citation")
        return {"value": value, "claim": f"SPECTER learns document-level representations of papers from {value}."}
    if role == "decompose":
        return {"subqueries": ["SPECTER document-level representation citations", "citation-informed transformer"]}
    if role == "verify":
        found = SPECTER in re.findall(r"PAPER (\S+):", prompt)
        return {"evidence_papers": [SPECTER] if found else [], "sufficient": found, "missing": ""}
    if role == "read":
        paper = re.search(r"PAPER (\S+):", prompt)
        relevant = paper is not None and paper.group(1) == SPECTER
        return {"sentences": ids_with(prompt, "citation")[:2] if relevant else [], "relevant": relevant}
    if role == "synthesize":
        cited = ids_with(prompt, "citation")[:1]
        claim = "SPECTER learns document-level representations of papers from their citations."
        return {"claims": [{"text": claim, "sentences": cited}], "insufficient_evidence": not cited}
    return {}


class OpenAIStub:
    def __init__(
        self,
        reply: Reply = literature_reply,
        model: str = "stub-model",
        delays: dict[str, float] | None = None,
        faults: dict[str, str] | None = None,
        retry_after: str = "1",
        hang_s: float = 30.0,
        logprobs: bool = True,
        stream_piece: int = 12,
        stream_delay: float = 0.0,
        refuse_stream: bool = False,
    ) -> None:
        self.reply = reply
        self.model = model
        self.delays = delays or {}  # seconds to wait before answering a role (to watch live progress)
        self.faults = faults or {}  # role (or "*") -> one of FAULTS
        unknown = set(self.faults.values()) - set(FAULTS)
        if unknown:
            raise ValueError(f"unknown faults {sorted(unknown)}; choose from {FAULTS}")
        self.retry_after = retry_after
        self.hang_s = hang_s
        self.logprobs = logprobs  # False: a request asking for logprobs gets a 400, as some endpoints do
        # a request with `"stream": true` gets its reply in pieces of `stream_piece` characters,
        # `stream_delay` seconds apart (to watch an answer appear while it is written)
        self.stream_piece = stream_piece
        self.stream_delay = stream_delay
        self.refuse_stream = refuse_stream  # True: a streamed request gets a 400, as some servers give
        self.requests: list[dict[str, Any]] = []  # role, body, at (time.monotonic())
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        host = host.decode() if isinstance(host, bytes) else host
        return f"http://{host}:{port}/v1"

    def start(self) -> OpenAIStub:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": stub.model, "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                messages = body.get("messages") or []
                prompt = "\n".join(str(m.get("content") or "") for m in messages)
                plain = not body.get("response_format") and not body.get("tools")
                role = "choose" if body.get("logprobs") and plain else role_of(body, prompt)
                stub.requests.append({"role": role, "body": body, "at": time.monotonic()})
                if role == "choose":  # one token with its top log-probabilities
                    if not stub.logprobs:
                        self._send(
                            400,
                            {
                                "error": {
                                    "message": "logprobs is not supported for this model",
                                    "type": "invalid_request_error",
                                }
                            },
                        )
                        return
                    # the support judge: yes; option scoring: with evidence B is likely, without it A
                    # (so calibration has something to correct)
                    if "Claim:" in prompt:
                        pairs = [("yes", -0.1), ("no", -2.4)]
                    elif "What the papers say" in prompt:
                        pairs = [("B", -0.2), ("A", -1.8)]
                    else:
                        pairs = [("B", -1.8), ("A", -0.2)]
                    top = [{"token": t, "logprob": lp, "bytes": None} for t, lp in pairs]
                    names, b = [t for t, _ in pairs], pairs[0][1]
                    self._send(
                        200,
                        {
                            "id": f"chatcmpl-{len(stub.requests)}",
                            "object": "chat.completion",
                            "created": 0,
                            "model": body.get("model") or stub.model,
                            "choices": [
                                {
                                    "index": 0,
                                    "message": {"role": "assistant", "content": names[0]},
                                    "finish_reason": "length",
                                    "logprobs": {
                                        "content": [
                                            {"token": names[0], "logprob": b, "bytes": None, "top_logprobs": top}
                                        ]
                                    },
                                }
                            ],
                            "usage": {
                                "prompt_tokens": len(prompt.split()),
                                "completion_tokens": 1,
                                "total_tokens": len(prompt.split()) + 1,
                            },
                        },
                    )
                    return
                if body.get("stream") and stub.refuse_stream:
                    self._send(
                        400, {"error": {"message": "stream_options is not supported", "type": "invalid_request_error"}}
                    )
                    return
                fault = stub.faults.get(role) or stub.faults.get("*")
                if fault and fault != "prose":
                    self._fault(fault)
                    return
                time.sleep(stub.delays.get(role, 0.0))
                content = PROSE if fault == "prose" else json.dumps(stub.reply(role, body, prompt))
                prompt_tokens, completion_tokens = len(prompt.split()), len(content.split())
                message: dict[str, Any] = {"role": "assistant", "content": content}
                if body.get("tools"):  # function_calling: answer as the forced tool call
                    name = body["tools"][0]["function"]["name"]
                    message = {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {"id": "call_1", "type": "function", "function": {"name": name, "arguments": content}}
                        ],
                    }
                if body.get("stream"):
                    self._stream(body, message, prompt_tokens, completion_tokens)
                    return
                self._send(
                    200,
                    {
                        "id": f"chatcmpl-{len(stub.requests)}",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body.get("model") or stub.model,
                        "choices": [{"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}],
                        "usage": {
                            "prompt_tokens": prompt_tokens,
                            "completion_tokens": completion_tokens,
                            "total_tokens": prompt_tokens + completion_tokens,
                        },
                    },
                )

            def _send(
                self,
                code: int,
                payload: dict[str, Any] | bytes,
                content_type: str = "application/json",
                headers: dict[str, str] | None = None,
            ) -> None:
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, body: dict[str, Any], message: dict[str, Any], prompt_t: int, completion_t: int) -> None:
                """The reply as server-sent events, `stream_piece` characters each, `stream_delay`
                seconds apart; its usage last when `stream_options.include_usage` asks for it."""
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                base = {
                    "id": f"chatcmpl-{len(stub.requests)}",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": body.get("model") or stub.model,
                }

                def event(choices: list[dict[str, Any]], **extra: Any) -> None:
                    self.wfile.write(b"data: " + json.dumps({**base, "choices": choices, **extra}).encode() + b"\n\n")
                    self.wfile.flush()

                calls = message.get("tool_calls")
                text = calls[0]["function"]["arguments"] if calls else message["content"]
                pieces = [text[i : i + stub.stream_piece] for i in range(0, len(text), stub.stream_piece)] or [""]
                for n, piece in enumerate(pieces):
                    if calls:
                        call = {"index": 0, "function": {"arguments": piece}}
                        if n == 0:
                            call.update(
                                id=calls[0]["id"],
                                type="function",
                                function={"name": calls[0]["function"]["name"], "arguments": piece},
                            )
                        delta: dict[str, Any] = {"tool_calls": [call]}
                    else:
                        delta = {"content": piece}
                    if n == 0:
                        delta["role"] = "assistant"
                    event([{"index": 0, "delta": delta, "finish_reason": None, "logprobs": None}])
                    time.sleep(stub.stream_delay)
                event([{"index": 0, "delta": {}, "finish_reason": "tool_calls" if calls else "stop", "logprobs": None}])
                if (body.get("stream_options") or {}).get("include_usage"):
                    usage = {
                        "prompt_tokens": prompt_t,
                        "completion_tokens": completion_t,
                        "total_tokens": prompt_t + completion_t,
                    }
                    event([], usage=usage)
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

            def _fault(self, fault: str) -> None:
                if fault == "429":
                    self._send(
                        429,
                        {"error": {"message": "Rate limit reached, slow down", "type": "requests"}},
                        headers={"Retry-After": stub.retry_after},
                    )
                elif fault == "401":
                    self._send(401, {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}})
                elif fault == "html":
                    self._send(200, HTML, "text/html; charset=utf-8")
                elif fault == "invalid_json":
                    self._send(200, b'{"id": "chatcmpl-1", "choices": [', "application/json")
                elif fault == "hang":
                    stub._stopping.wait(stub.hang_s)  # the client times out first; stop() ends the wait
                    self.close_connection = True
                elif fault == "reset":  # SO_LINGER 0: close() sends RST, not FIN
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.connection.close()
                    self.close_connection = True

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:  # a client gone mid-reply
                pass

        self._stopping.clear()
        self._server = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> OpenAIStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
