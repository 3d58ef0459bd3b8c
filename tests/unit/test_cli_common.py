"""The commands' shared error handling: a user problem is one line and exit status 1, a bug keeps
its traceback, and no problem type is imported to find out."""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer
from typer.testing import CliRunner

from agent.cli.common import reports_problems
from agent.records.problems import USER_PROBLEMS, user_problems

pytestmark = pytest.mark.unit


def _app(exc: BaseException) -> typer.Typer:
    app = typer.Typer()

    @app.command()
    @reports_problems
    def boom(name: str = typer.Option("x", help="kept through the decorator")) -> None:
        raise exc

    @app.command()
    def other() -> None:  # a second command, so typer keeps `boom` as a subcommand name
        pass

    return app


def test_a_user_problem_is_one_line_and_exit_1():
    from tools.index import IndexProblem

    result = CliRunner().invoke(_app(IndexProblem("no index at ~/litloop-index: build one")), ["boom"])
    assert result.exit_code == 1
    assert "error: no index at ~/litloop-index: build one" in result.output
    assert "Traceback" not in result.output


def test_a_bug_keeps_its_exception():
    result = CliRunner().invoke(_app(KeyError("papers")), ["boom"])
    assert result.exit_code == 1
    assert isinstance(result.exception, KeyError)


def test_the_decorated_command_keeps_its_options():
    result = CliRunner().invoke(_app(RuntimeError("x")), ["boom", "--help"])
    assert result.exit_code == 0
    assert "kept through the decorator" in result.output


def test_every_listed_problem_exists():
    import importlib

    for module, name in USER_PROBLEMS:
        cls = getattr(importlib.import_module(module), name)
        assert issubclass(cls, Exception)
        assert cls in user_problems()


def test_finding_the_problems_imports_nothing():
    code = (
        "import sys\nfrom agent.records.problems import user_problems\nuser_problems()\n"
        "print(sorted(m for m in ('tools.index', 'tools.retrieval.dense', 'agent.llm.local') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
