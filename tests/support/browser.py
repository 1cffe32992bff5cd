"""Headless Chromium driven over its DevTools pipe, for the tests that look at a page in a real
browser (tests/test_report.py) and for docs/screenshots.py. Chromium comes from Debian's
packages (`apt-get install chromium`; `make test` installs it where it is missing)."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

NAMES = ("chromium", "chromium-browser", "google-chrome")


def chromium() -> str | None:
    """The Chromium binary on the PATH, or None."""
    return next((shutil.which(n) for n in NAMES if shutil.which(n)), None)


class Browser:
    """Headless Chromium driven over --remote-debugging-pipe (JSON messages ended by NUL on
    file descriptors 3 and 4): enough of the DevTools protocol to log in, open a page, read its
    text and take a screenshot, without a client library."""

    def __init__(self, width: int = 1280, height: int = 1100):
        binary = chromium()
        if binary is None:
            raise RuntimeError("no Chromium on the PATH: apt-get install chromium (make test installs it)")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def fds():  # the child reads commands on fd 3 and writes answers on fd 4
            os.dup2(to_child_r, 3)
            os.dup2(from_child_w, 4)

        self.profile = tempfile.mkdtemp(prefix="wb-chromium-")
        self.proc = subprocess.Popen(
            [
                binary,
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--remote-debugging-pipe",
                f"--user-data-dir={self.profile}",
                "--no-first-run",
                "--hide-scrollbars",
                "--force-color-profile=srgb",
                f"--window-size={width},{height}",
                "about:blank",
            ],
            # 3 and 4 are kept too: subprocess closes every other descriptor after preexec_fn has made them.
            preexec_fn=fds,
            pass_fds=(3, 4, to_child_r, from_child_w),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._buffer, self._next = b"", 0
        self.events: list[dict] = []  # what the page reported meanwhile (requests, console messages)
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.page("Page.enable")
        self.resize(width, height)

    def resize(self, width: int, height: int) -> None:
        """The page's viewport, as a window of that size shows it."""
        self.page("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)

    def send(self, method: str, session: str | None = None, **params):
        self._next += 1
        message = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        while True:
            while b"\0" not in self._buffer:
                chunk = os.read(self._from_child, 1 << 20)
                if not chunk:
                    raise RuntimeError("Chromium closed its DevTools pipe")
                self._buffer += chunk
            raw, self._buffer = self._buffer.split(b"\0", 1)
            answer = json.loads(raw)
            if answer.get("id") == self._next:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            if "method" in answer:
                self.events.append(answer)

    def page(self, method: str, **params):
        return self.send(method, self.session, **params)

    def evaluate(self, expression: str):
        result = self.page("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        return result.get("result", {}).get("value")

    def goto(self, url: str) -> None:
        self.page("Page.navigate", url=url)

    def wait_for(self, expression: str, timeout: float = 60) -> None:
        import time

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if self.evaluate(expression):
                    return
            except RuntimeError:
                pass
            time.sleep(0.3)
        raise RuntimeError(f"timed out waiting for {expression}")

    def screenshot(self, path: Path, full_page: bool = False) -> None:
        """The viewport as PNG (with `full_page`, the whole page at the viewport's width)."""
        params: dict = {"format": "png"}
        if full_page:
            size = self.page("Page.getLayoutMetrics")["cssContentSize"]
            params.update(
                captureBeyondViewport=True,
                clip={"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1},
            )
        data = self.page("Page.captureScreenshot", **params)["data"]
        Path(path).write_bytes(base64.b64decode(data))

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except (RuntimeError, OSError):
            pass
        self.proc.wait(timeout=30)
        shutil.rmtree(self.profile, ignore_errors=True)
