"""A real Label Studio server for the tests: installed in its own virtual environment
(cached between runs in ~/.cache/workbench-tests), started on 127.0.0.1 on a free port with
SQLite in a temporary folder and a fixed legacy API token, stopped afterwards.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

VERSION = "1.23.2"
CACHE = Path(os.environ.get("WORKBENCH_TEST_CACHE", Path.home() / ".cache" / "workbench-tests"))
VENV = CACHE / f"label-studio-{VERSION}"
INSTALL_TIMEOUT = 1200
START_TIMEOUT = 240


def ensure_installed() -> Path:
    exe = VENV / "bin" / "label-studio"
    marker = VENV / ".complete"
    if exe.exists() and marker.exists():
        return exe
    if VENV.exists():
        shutil.rmtree(VENV)
    CACHE.mkdir(parents=True, exist_ok=True)
    python = shutil.which("python3.11") or sys.executable
    subprocess.run([python, "-m", "venv", str(VENV)], check=True, timeout=300)
    subprocess.run(
        [str(VENV / "bin" / "pip"), "install", "--quiet", f"label-studio=={VERSION}"],
        check=True,
        timeout=INSTALL_TIMEOUT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    marker.write_text(VERSION)
    return exe


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LabelStudioServer:
    def __init__(self, data_dir: Path, token: str = "0a1b2c3d4e5f60718293", port: int | None = None):
        self.exe = ensure_installed()
        self.data_dir = Path(data_dir)
        self.token = token
        self.port = port or free_port()
        self.proc: subprocess.Popen | None = None
        self.log = self.data_dir / "server.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "LabelStudioServer":
        self.data_dir.mkdir(parents=True, exist_ok=True)
        env = {
            **os.environ,
            "LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN": "true",
            "LABEL_STUDIO_BASE_DATA_DIR": str(self.data_dir),
            "DJANGO_DB": "sqlite",
            "LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK": "false",
            "SENTRY_DSN": "",
            "LABEL_STUDIO_COLLECT_ANALYTICS": "false",
        }
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [
                    str(self.exe),
                    "start",
                    "--no-browser",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(self.port),
                    "--data-dir",
                    str(self.data_dir),
                    "--username",
                    "admin@example.com",
                    "--password",
                    "admin-pass-123",
                    "--user-token",
                    self.token,
                ],
                cwd=self.data_dir,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"Label Studio exited with {self.proc.returncode}; see {self.log}")
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                pass
            time.sleep(1)
        self.stop()
        raise RuntimeError(f"Label Studio did not answer /health within {START_TIMEOUT}s; see {self.log}")

    def kill(self) -> None:
        """Stop it hard (SIGKILL to the whole process group), as a crash would."""
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()
