"""The eval modules import light, and `litloop score` never loads torch, Chroma or matplotlib."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.unit

HEAVY = ("torch", "chromadb", "sentence_transformers", "transformers", "matplotlib", "langgraph")


def loaded_after(code: str) -> list[str]:
    probe = f"import sys\n{code}\nprint(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    res = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return [m for m in res.stdout.strip().split(",") if m]


def test_eval_modules_import_light():
    assert (
        loaded_after("import evals.run, evals.report, evals.datasets, evals.answers, evals.judge, agent.cli.evaluate")
        == []
    )


def test_score_command_stays_light(tmp_path):
    gold = tmp_path / "g.jsonl"
    gold.write_text(
        '{"query_id": "a", "question": "q", "task_family": "multi_paper", "gold_papers": [{"paper_id": "p"}]}\n'
    )
    sub = tmp_path / "s.jsonl"
    sub.write_text('{"query_id": "a", "gold_papers": [{"paper_id": "p"}], "answer": {}}\n')
    code = (
        "from typer.testing import CliRunner\nfrom agent.cli.main import app\n"
        f"r = CliRunner().invoke(app, ['score', '--gold', {str(gold)!r}, '--submission', {str(sub)!r}, '--json'])\n"
        "assert r.exit_code == 0, r.output"
    )
    assert loaded_after(code) == []
