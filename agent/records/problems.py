"""The exceptions whose message is written for the user, and how an interface finds them.

Every interface (the CLI, the MCP server) prints such a problem as one line, not a traceback; anything
else is a bug and keeps its traceback. Nothing here imports the modules that define them: a module that
is not loaded cannot have raised its exception, so looking the types up costs nothing at start-up.
"""

from __future__ import annotations

import sys

# (module, class): the exceptions whose message is written for the user (what to install, set or
# rebuild). A module that is not loaded cannot have raised its exception, so none is imported here.
USER_PROBLEMS = (
    ("tools.index", "IndexProblem"),
    ("tools.index", "BuildFailed"),
    ("tools.errors", "ModelNotAvailable"),
    ("agent.llm.local", "LocalModelError"),
    ("tools.retrieval.dense", "DenseStoreProblem"),
    ("tools.index.store", "StoreProblem"),
    ("tools.registry", "CorpusProblem"),
    ("tools.index.vector_file", "VectorFileProblem"),
    ("tools.index.ray_build", "RayProblem"),
    ("agent.serve.checkpoint", "CheckpointProblem"),
)


def user_problems() -> tuple[type[BaseException], ...]:
    """The loaded user-problem types: a command prints them as one line, not a traceback.
    Anything else is a bug and keeps its traceback."""
    found = []
    for module, name in USER_PROBLEMS:
        loaded = sys.modules.get(module)
        if loaded is not None and hasattr(loaded, name):
            found.append(getattr(loaded, name))
    return tuple(found)
