"""Time the whole agent on questions about the demo corpus: per question and per node.

    python -m bench.agent [--preset local] [--index DIR] [--limit N] [--out DIR]

With no endpoint configured this runs the embedded local model on the CPU (the `local` preset);
the questions below are about the demo corpus (four full-text ACL papers and CiteSeer abstracts).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from evals.answers import percentile

DEMO_QUESTIONS = [
    "How does SPECTER use citations to learn document-level representations of papers?",
    "What evaluation tasks does the SCIDOCS benchmark introduced with SPECTER include?",
    "How many papers does the S2ORC corpus contain, and where does its full text come from?",
    "What kinds of nodes and edges does the Semantic Scholar literature graph contain?",
    "What does LongEval recommend for human evaluation of faithfulness in long-form summaries?",
    "Which papers propose conditional random fields for sequence labeling, and what do they compare against?",
    "How can the semantics of an agent communication language such as KQML be defined?",
    "Which papers apply reinforcement learning to robot navigation?",
    "What precision does ScienceParse reach for title extraction in the literature graph paper?",
    "How is citation analysis used to recommend related documents?",
]


def main(argv: list[str] | None = None) -> int:
    from agent.api import ask

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset")
    ap.add_argument("--index")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    rows = []
    for q in DEMO_QUESTIONS[: args.limit]:
        r = ask(q, preset=args.preset, index=args.index)
        u = r["usage"]
        rows.append(
            {
                "question": q,
                "seconds": u["seconds_total"],
                "llm_calls": u.get("llm_calls", 0),
                "input_tokens": u.get("input_tokens", 0),
                "output_tokens": u.get("output_tokens", 0),
                "citations": len(r["answer"].get("citations", [])),
                "errors": len(r["errors"]),
                "status": r["status"],
                "rounds": r["rounds"],
                "preset": r["preset"],
                "nodes": {
                    k.removeprefix("seconds_"): v
                    for k, v in u.items()
                    if k.startswith("seconds_") and k != "seconds_total"
                },
            }
        )
        print(
            f"{rows[-1]['seconds']:6.1f} s  {rows[-1]['llm_calls']:3.0f} calls  {rows[-1]['citations']} cites  {q}",
            file=sys.stderr,
        )
    secs = [r["seconds"] for r in rows]
    nodes = sorted({k for r in rows for k in r["nodes"]})
    summary = {
        "questions": len(rows),
        "preset": rows[0]["preset"] if rows else None,
        "seconds_median": statistics.median(secs),
        "seconds_p95": percentile(secs, 95),
        "llm_calls_mean": statistics.mean(r["llm_calls"] for r in rows),
        "input_tokens_mean": statistics.mean(r["input_tokens"] for r in rows),
        "output_tokens_mean": statistics.mean(r["output_tokens"] for r in rows),
        "node_seconds_mean": {n: statistics.mean(r["nodes"].get(n, 0.0) for r in rows) for n in nodes},
        "answered_with_citations": sum(r["citations"] > 0 for r in rows),
    }
    print(json.dumps(summary, indent=2))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "agent_timing.json").write_text(json.dumps({"summary": summary, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
