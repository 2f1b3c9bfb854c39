"""Stopping a server a test started: SIGTERM, then SIGKILL when it does not stop in time."""

from __future__ import annotations

import subprocess


def stop(process: subprocess.Popen[bytes], grace: float = 15.0) -> None:
    process.terminate()
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
