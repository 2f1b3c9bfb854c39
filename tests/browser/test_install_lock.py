"""The Chromium install of the browser tests' set-up runs once when several pytest workers need it at once."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.browser import conftest


def test_workers_that_need_chromium_at_once_install_it_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    browser = tmp_path / "chromium"
    monkeypatch.setattr(conftest, "CHROMIUM", browser)
    monkeypatch.setattr(conftest, "INSTALL_LOCK", tmp_path / "install.lock")
    monkeypatch.setattr(conftest.os, "geteuid", lambda: 0)
    monkeypatch.setattr(conftest.shutil, "which", lambda name: f"/usr/bin/{name}")
    installs: list[list[str]] = []

    def apt(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        if command[1] == "install":
            installs.append(command)
            time.sleep(0.3)  # long enough for the other worker to arrive while this one installs
            browser.write_text("#!/bin/sh\n")
        return subprocess.CompletedProcess(command, 0, b"", b"")

    monkeypatch.setattr(conftest.subprocess, "run", apt)
    workers = [threading.Thread(target=conftest._install_chromium) for _ in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert browser.exists()
    assert len(installs) == 1, installs
