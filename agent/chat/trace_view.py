"""The trace viewer: a run tree as rows, as plain text (the web chat) and with rich (`litloop
trace show`, the terminal chat's /trace); the one-line header and the times as a reader sees them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.tree import Tree

from agent.tracing.store import run_seconds, summary_of

# Runs LangChain creates around a structured call (sequence, map, assign, lambda, fallbacks):
# plumbing a reader skips unless asked for everything; their children move up a level.
_PLUMBING = re.compile(
    r"^(Runnable\w*|ChannelWrite.*|ChannelRead.*|_\w+|<lambda>|itemgetter.*|route_\w+|"
    r"\w*OutputParser|\w*ToolsParser)"
)


def tree_rows(records: list[dict[str, Any]], everything: bool = False) -> list[tuple[int, dict[str, Any]]]:
    """(depth, record) in tree order; without `everything`, LangChain's plumbing runs are hidden."""
    by_id = {r["id"]: r for r in records}

    def shown(r: dict[str, Any]) -> bool:
        return (
            everything
            or r.get("run_type") != "chain"
            or not r.get("parent_run_id")
            or not _PLUMBING.match(r.get("name") or "")
        )

    rows = []
    for r in records:  # dotted order: parents first
        if not shown(r):
            continue
        depth, parent = 0, r.get("parent_run_id")
        while parent in by_id:
            if shown(by_id[parent]):
                depth += 1
            parent = by_id[parent].get("parent_run_id")
        rows.append((depth, r))
    return rows


def describe_run(r: dict[str, Any]) -> dict[str, Any]:
    """What a viewer prints for one run: label, seconds, tokens, cost, error lines."""
    meta = r.get("metadata") or {}
    bits = []
    if meta.get("round") and r.get("run_type") == "chain" and meta.get("langgraph_node") == r.get("name"):
        bits.append(f"round {meta['round']}")
    if r.get("run_type") == "retriever" and meta.get("subquery"):
        bits.append(repr(meta["subquery"])[:80])
    if meta.get("paper_id") and r.get("run_type") == "chain" and str(meta["paper_id"]) not in str(r.get("name")):
        bits.append(str(meta["paper_id"]))
    if r.get("run_type") == "llm" and meta.get("model"):
        bits.append(str(meta["model"]))
    usage = meta.get("token_usage") or {}
    errors = []
    if r.get("error"):
        # LangChain stores repr(exception) followed by the traceback: keep the repr
        first = str(r["error"]).split("Traceback (most recent call last)")[0].strip()
        errors.append((first.splitlines() or [""])[0][:300])
    for e in meta.get("node_errors") or []:
        if isinstance(e, Mapping):
            kind = f" ({e['kind']})" if e.get("kind") else ""
            errors.append(f"{e.get('node')}{kind}: {str(e.get('error') or '')[:200]}")
    return {
        # a model call is named as one, not by its client's class (ChatOpenAI, ChatScripted...)
        "name": "model call" if r.get("run_type") == "llm" else r.get("name"),
        "run_type": r.get("run_type"),
        "detail": " · ".join(bits),
        "seconds": run_seconds(r),
        "tokens": usage.get("total_tokens", 0),
        "input_tokens": usage.get("input_tokens", 0),
        "output_tokens": usage.get("output_tokens", 0),
        "cost": meta.get("cost_estimate_usd"),
        "errors": errors,
    }


def tree_text(records: list[dict[str, Any]], everything: bool = False) -> str:
    """The run tree as plain indented text (the web chat's trace view, logs)."""
    lines = []
    for depth, r in tree_rows(records, everything):
        d = describe_run(r)
        parts = [f"{'  ' * depth}{d['name']} [{d['run_type']}]"]
        if d["detail"]:
            parts.append(d["detail"])
        if d["seconds"] is not None:
            parts.append(f"{d['seconds']:.2f} s")
        if d["tokens"]:
            parts.append(f"{d['input_tokens']}+{d['output_tokens']} tok")
        if d["cost"]:
            parts.append(f"${d['cost']:.4f}")
        line = "  ".join(parts)
        for e in d["errors"]:
            line += f"\n{'  ' * (depth + 1)}! {e}"
        lines.append(line)
    return "\n".join(lines)


def local_time(iso: str | None) -> str:
    if not iso:
        return "-"
    try:
        return datetime.fromisoformat(iso).astimezone().strftime("%Y-%m-%d %H:%M:%S")
    except ValueError:
        return iso


STATUS_STYLE = {"ok": "green", "partial": "yellow", "error": "bold red", "incomplete": "dim"}


def trace_header(records: list[dict[str, Any]]) -> str:
    s = summary_of(records, records[0]["trace_id"] if records else "?")
    bits = [
        f"[bold]trace {s['trace_id']}[/]",
        local_time(s["start_time"]),
        f"[{STATUS_STYLE.get(s['status'], '')}]{s['status']}[/]",
    ]
    if s["duration_s"] is not None:
        bits.append(f"{s['duration_s']:.1f} s")
    bits.append(f"{s['input_tokens']:,}+{s['output_tokens']:,} tokens in {s['llm_calls']} LLM calls")
    if s["cost_estimate_usd"]:
        bits.append(f"~${s['cost_estimate_usd']:.4f}")
    if s.get("thread_id"):
        bits.append(f"thread {escape(str(s['thread_id']))}")
    head = " · ".join(bits)
    if s["question"]:
        head += f"\n[italic]{escape(' '.join(str(s['question']).split())[:300])}[/]"
    return head


def print_trace(console: Console, records: list[dict[str, Any]], everything: bool = False) -> None:
    """The run tree with rich: one line per run (name, type, detail, seconds, tokens), errors red."""
    console.print(trace_header(records))
    tops: list[Tree] = []  # one root per question; several only when a run stopped before its root ended
    stack: list[Tree] = []
    colours = {"llm": "magenta", "retriever": "cyan", "tool": "blue", "chain": "bold"}
    for depth, r in tree_rows(records, everything):
        d = describe_run(r)
        label = f"[{colours.get(d['run_type'], '')}]{escape(str(d['name']))}[/] [dim]{d['run_type']}[/]"
        if d["detail"]:
            label += f"  {escape(d['detail'])}"
        if d["seconds"] is not None:
            label += f"  [green]{d['seconds']:.2f} s[/]"
        if d["tokens"]:
            label += f"  [yellow]{d['input_tokens']:,}+{d['output_tokens']:,} tok[/]"
        if d["cost"]:
            label += f"  [dim]${d['cost']:.4f}[/]"
        for e in d["errors"]:
            label += f"\n[red]✗ {escape(e)}[/]"
        if depth == 0 or not stack:
            stack = [Tree(label, guide_style="dim")]
            tops.append(stack[0])
            continue
        stack = stack[:depth]
        stack.append(stack[-1].add(label))
    for tree in tops:
        console.print(tree)
