"""A throwaway PostgreSQL cluster for tests: initdb in a temp dir, started on a free port.

Debian's server binaries (`apt-get install postgresql`) are found through `pg_config --bindir` or
/usr/lib/postgresql/*/bin. initdb refuses to run as root, so as root the cluster runs as the
`postgres` system user. Where no binaries are found or the cluster does not start, the caller
skips with the reason.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from pathlib import Path

from tests.served import free_port


class NoPostgres(RuntimeError):
    """No throwaway cluster can be started here; the message says why."""


def _bindir() -> Path:
    candidates: list[str] = []
    if shutil.which("pg_config"):
        out = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True, check=False)
        candidates.append(out.stdout.strip())
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    for c in candidates:
        if c and (Path(c) / "initdb").exists() and (Path(c) / "pg_ctl").exists():
            return Path(c)
    raise NoPostgres("no PostgreSQL server binaries (initdb, pg_ctl); install Debian's `postgresql` package")


class Cluster:
    """initdb + pg_ctl start in `root`; `url` connects as the superuser `litloop` (trust auth)."""

    def __init__(self, root: Path) -> None:
        self.bindir = _bindir()
        self.root = Path(root)
        self.data = self.root / "data"
        self.port = free_port()
        self.user: str | None = None
        if os.geteuid() == 0:
            if not shutil.which("runuser"):
                raise NoPostgres("running as root and no `runuser` to start Postgres as the postgres user")
            try:
                import pwd

                pw = pwd.getpwnam("postgres")
            except KeyError as exc:
                raise NoPostgres("running as root and there is no `postgres` system user") from exc
            self.user = "postgres"
            self._uid, self._gid = pw.pw_uid, pw.pw_gid
        self.url = f"postgresql://litloop@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        cmd = list(args)
        if self.user:
            cmd = ["runuser", "-u", self.user, "--", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)

    def start(self) -> Cluster:
        self.root.mkdir(parents=True, exist_ok=True)
        if self.user:
            os.chown(self.root, self._uid, self._gid)
            # the temp dirs above must be traversable by the postgres user
            p = self.root
            while p != p.parent and str(p).startswith(("/tmp", os.environ.get("TMPDIR", "/tmp"))):
                p = p.parent
                try:
                    os.chmod(p, os.stat(p).st_mode | 0o711)
                except OSError:
                    break
        init = self._run(
            str(self.bindir / "initdb"), "-D", str(self.data), "-U", "litloop", "-A", "trust", "-E", "UTF8"
        )
        if init.returncode != 0:
            raise NoPostgres(f"initdb failed: {init.stderr.strip()[-400:]}")
        opts = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
        log = self.root / "postgres.log"
        started = self._run(
            str(self.bindir / "pg_ctl"), "-D", str(self.data), "-o", opts, "-l", str(log), "-w", "start"
        )
        if started.returncode != 0:
            tail = log.read_text(errors="replace")[-400:] if log.exists() else started.stderr
            raise NoPostgres(f"pg_ctl start failed: {tail.strip()}")
        return self

    def new_database(self, name: str) -> str:
        """A fresh database on this cluster; its URL."""
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url.rsplit("/", 1)[0] + f"/{name}"

    def stop(self) -> None:
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop", timeout=60)
