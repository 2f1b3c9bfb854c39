"""``linksvc --version`` prints the installed distribution's version."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version


def test_version_prints_the_installed_version() -> None:
    result = subprocess.run([sys.executable, "-m", "linksvc", "--version"], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"linksvc {version('linksvc')}\n"
