"""LangSmith-style run trees of every agent run, written locally. SEE: docs/design.md section 8.

- `redact.py`: what is written is summarised and redacted (`Summariser`): chunk lists, the
  evidence pool and the per-subquery retrieval results become counts, paper counts and the top
  ids; strings are cut at `tracing.max_field_chars`; API keys are masked by pattern and by value.
- `tracer.py`: `RunTreeTracer`, a LangChain `BaseTracer` that appends one record per finished
  run (LangSmith's fields: `id`, `trace_id`, `parent_run_id`, `dotted_order`, `name`,
  `run_type`, `start_time`, `end_time`, `inputs`, `outputs`, `error`, `tags`, `metadata`) to
  `<traces dir>/<trace_id>.jsonl`; `make_tracer` / `attach_tracer` give a run its tracer.
- `steps.py`: `trace_step`, a child run inside a node (retrieval per subquery, reading per paper).
- `store.py`: reading traces back (`find_trace`, `load_trace`, `summary_of`, `list_traces`).

Drawing a trace (the run tree of `litloop trace show` and the chats) is the viewer's:
`agent.chat.trace_view`. Nothing here opens a socket: sending runs to LangSmith is LangChain's
own tracer, active only when the user sets `LANGSMITH_TRACING=true` (and a key).

The package re-exports the public names of its modules.
"""

from agent.tracing.redact import (
    REDACTED,
    SECRET_ENV,
    Summariser,
    is_chunk,
    known_secrets,
)
from agent.tracing.steps import Step, trace_step
from agent.tracing.store import (
    TraceNotFound,
    find_trace,
    list_traces,
    load_trace,
    read_records,
    run_seconds,
    summary_of,
    trace_files,
    traces_dir,
)
from agent.tracing.tracer import (
    RECORD_FIELDS,
    RunTreeTracer,
    attach_tracer,
    langsmith_status,
    make_tracer,
    usage_of_llm_run,
    with_tracer,
)

__all__ = [
    "RECORD_FIELDS",
    "REDACTED",
    "SECRET_ENV",
    "RunTreeTracer",
    "Step",
    "Summariser",
    "TraceNotFound",
    "attach_tracer",
    "find_trace",
    "is_chunk",
    "known_secrets",
    "langsmith_status",
    "list_traces",
    "load_trace",
    "make_tracer",
    "read_records",
    "run_seconds",
    "summary_of",
    "trace_files",
    "trace_step",
    "traces_dir",
    "usage_of_llm_run",
    "with_tracer",
]
