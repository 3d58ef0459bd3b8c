"""tools/index/ray_build.py without a Ray instance: Ray stays an optional import, the error without it
names the extra, CPU actors fit the nodes, a dead cluster address fails at once."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from tools.index.ray_build import RayProblem, _check_reachable, cpu_actors, import_ray

pytestmark = pytest.mark.unit


def test_ray_is_not_imported_with_the_module():
    code = "import sys, tools.index.ray_build, agent.cli.main; assert 'ray' not in sys.modules, 'ray imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_without_ray_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # what an environment without ray imports
    monkeypatch.setitem(sys.modules, "ray.data", None)
    with pytest.raises(RayProblem, match=r"pip install 'litloop\[ray\]'"):
        import_ray()


@pytest.mark.parametrize(
    ("nodes", "expected"),
    [
        ([2], (2, 1)),  # this machine: one actor of both cores
        ([16, 16], (4, 8)),  # up to 4 threads an actor, as many as fit
        ([2, 16], (2, 9)),  # sized to the smallest node, or its share never starts
        ([0, 8], (4, 2)),  # a node without CPUs (a GPU-only or head node) holds none
        ([], (1, 1)),
    ],
)
def test_cpu_actors_fit_every_node(nodes, expected):
    assert cpu_actors(nodes) == expected


def test_dead_address_fails_at_once():
    with socket.socket() as s:  # a loopback port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for address in (f"127.0.0.1:{port}", f"ray://127.0.0.1:{port}"):
        with pytest.raises(RayProblem, match="nothing answers at Ray address.*ray start --head"):
            _check_reachable(address)
    for address in ("auto", "local"):  # left to Ray
        _check_reachable(address)
