"""Prompt templates, one file per node (CONTRIBUTING.md: prompts are data). Placeholders are `$name` /
`${name}` (string.Template), so JSON braces in examples need no escaping; rendering with a
missing or an unexpected variable is an error, and a test checks every node passes exactly the
variables its template uses."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from string import Template

PROMPTS_DIR = Path(__file__).resolve().parent


@cache
def template(name: str) -> Template:
    path = PROMPTS_DIR / f"{name}.md"
    if not path.exists():
        raise KeyError(f"no prompt template {name!r} in {PROMPTS_DIR}")
    return Template(path.read_text(encoding="utf-8"))


def variables(name: str) -> set[str]:
    return set(template(name).get_identifiers())


def render(name: str, **values: object) -> str:
    wanted = variables(name)
    given = set(values)
    if wanted != given:
        raise ValueError(f"prompt {name!r}: missing {sorted(wanted - given)}, unexpected {sorted(given - wanted)}")
    return template(name).substitute({k: str(v) for k, v in values.items()}).strip()


def names() -> list[str]:
    return sorted(p.stem for p in PROMPTS_DIR.glob("*.md"))
