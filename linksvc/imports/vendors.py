"""The vendors an import reads, by the name the API and the command line use."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from linksvc.imports import bitly, kutt, rebrandly, shlink, shortio, yourls
from linksvc.imports.rows import ImportRow


@dataclass(frozen=True)
class Vendor:
    name: str
    label: str
    source: str  # the documentation of the export format
    rows: Callable[[str], list[ImportRow]]


VENDORS: dict[str, Vendor] = {
    module.NAME: Vendor(module.NAME, module.LABEL, module.SOURCE, module.rows)
    for module in (bitly, rebrandly, shortio, shlink, yourls, kutt)
}
VENDOR_NAMES = tuple(VENDORS)
