"""CSV that a spreadsheet opens as text, never as formulas (OWASP "CSV Injection"; docs/decisions.md,
"Reports and bounded answers").

Every CSV the service writes goes through :func:`csv_text`: every field is quoted (``csv.QUOTE_ALL``, a quote
inside doubled) and neutralised by :func:`cell`. The rule holds whatever separator the reader's locale uses
(``,`` in most of the Americas, ``;`` in Colombia and most of Europe, tab when pasted): a ``'`` goes before a
trigger character (``=``, ``+``, ``-``, ``@``, tab, CR) found at the start of the field, and before one found
right after any separator a reader might split on (``,``, ``;``, tab, CR, LF). So even a reader that ignored
the quotes and split ``ok;=1+1;`` on ``;`` would see ``'=1+1``, text. Reading the value back: drop a ``'``
at the start and after such a separator when a trigger follows it.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable
from typing import Any

TRIGGERS = "=+-@\t\r"
SEPARATORS = ",;\t\r\n"
_INSIDE = re.compile(f"([{re.escape(SEPARATORS)}])(?=[{re.escape(TRIGGERS)}])")


def cell(value: Any) -> str:
    """``value`` as the text of a CSV field no spreadsheet reads as a formula (None is empty)."""
    text = "" if value is None else str(value)
    if not text:
        return text
    text = _INSIDE.sub(r"\1'", text)
    return "'" + text if text[0] in TRIGGERS else text


def csv_text(rows: Iterable[Iterable[Any]]) -> str:
    """``rows`` (the header first) as CSV text: CRLF line ends, every field quoted and neutralised."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n", quoting=csv.QUOTE_ALL)
    for row in rows:
        writer.writerow([cell(value) for value in row])
    return out.getvalue()
