"""The distribution lists its packages one by one (pyproject.toml): a package folder left out would be missing
from a wheel or a plain ``pip install .``, though an editable install still finds it."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_package_folder_is_listed_in_pyproject() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    folders = {".".join(init.parent.relative_to(ROOT).parts)
               for top in ("linksvc", "api", "storage") for init in (ROOT / top).rglob("__init__.py")}
    assert folders - listed == set()
    assert listed - folders == set()
