"""Heavy libraries stay off the pure import paths (CONTRIBUTING.md, "Layout and layers")."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.unit

CHECK = """
import sys
{stmt}
heavy = sorted(m for m in ("torch", "chromadb", "sentence_transformers", "transformers") if m in sys.modules)
print(",".join(heavy))
"""


@pytest.mark.parametrize(
    "stmt",
    [
        "import agent.cli.main",
        "import agent.graph",  # what langgraph.json loads: the wiring alone, no model or index
        "import tools.index, tools.index.search, tools.retrieval.fusion, tools.ingest.chunker, tools.ingest.loader",
        "import graph_store.citation_graph",
    ],
)
def test_no_heavy_imports(stmt):
    res = subprocess.run([sys.executable, "-c", CHECK.format(stmt=stmt)], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == ""


def test_cli_help_does_not_import_torch_or_chromadb():
    code = (
        "import sys\nfrom agent.cli.main import app\nfrom typer.testing import CliRunner\n"
        "r = CliRunner().invoke(app, ['--help'])\nassert r.exit_code == 0, r.output\n"
        "r = CliRunner().invoke(app, ['search', '--help'])\nassert r.exit_code == 0, r.output\n"
        "print(','.join(m for m in ('torch', 'chromadb', 'sentence_transformers') if m in sys.modules))"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == ""
