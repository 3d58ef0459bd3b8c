"""The one place chat models are built, and the one way they are asked for structured output.

`build_chat_model(role, settings)` returns a LangChain chat model for a node's role: Azure OpenAI
when `llm.azure_endpoint` is set, any OpenAI-compatible endpoint when `llm.base_url` is set, and
otherwise the embedded local model (agent/llm/local.py), started once per process and shared.

`structured_call(model, Schema, system, user)` sends a system prompt and one user message, asks
for JSON matching a pydantic schema, validates it, makes exactly one repair attempt when the output
is not valid, and then returns a failure *value* (never raises for bad output), so the graph can
record what went wrong and carry on with the other papers. `token_call(model, system, user)`
is the other call, for the model's next token with its log-probabilities (option scoring, the
support judge): recorded as an attempt in the same way, with the same endpoint health.

Retries of rate limits and timeouts are not done here: `max_retries` goes to the OpenAI client,
which retries 408/409/429/5xx, timeouts and connection errors with exponential backoff (0.5 s
doubling up to 8 s, 25% jitter, `Retry-After` honoured). Retrying again here would multiply.
Within one run (`endpoint_watch`, which `agent.api.ask` opens), an endpoint whose last
`ENDPOINT_FAILURES_TO_STOP` calls all failed after those retries gets no more calls: the rest
fail at once (kind `not_sent`), so a dead or hanging endpoint costs a run three failed calls,
not one per paper.
"""

from agent.llm.errors import describe_error as describe_error
from agent.llm.errors import is_endpoint_error as is_endpoint_error
from agent.llm.factory import ROLES as ROLES
from agent.llm.factory import Role as Role
from agent.llm.factory import StructuredMethod as StructuredMethod
from agent.llm.factory import backend_of as backend_of
from agent.llm.factory import build_chat_model as build_chat_model
from agent.llm.factory import model_name_for as model_name_for
from agent.llm.health import ENDPOINT_FAILURES_TO_STOP as ENDPOINT_FAILURES_TO_STOP
from agent.llm.health import EndpointHealth as EndpointHealth
from agent.llm.health import endpoint_watch as endpoint_watch
from agent.llm.results import ENDPOINT_KINDS as ENDPOINT_KINDS
from agent.llm.results import Attempt as Attempt
from agent.llm.results import ErrorKind as ErrorKind
from agent.llm.results import StructuredResult as StructuredResult
from agent.llm.structured import DEFAULT_REPAIR_PROMPT as DEFAULT_REPAIR_PROMPT
from agent.llm.structured import JSON_MODE_INSTRUCTION as JSON_MODE_INSTRUCTION
from agent.llm.structured import build_messages as build_messages
from agent.llm.structured import lean_schema as lean_schema
from agent.llm.structured import method_of as method_of
from agent.llm.structured import render_repair as render_repair
from agent.llm.structured import schema_text as schema_text
from agent.llm.structured import structured_call as structured_call
from agent.llm.structured import token_call as token_call
