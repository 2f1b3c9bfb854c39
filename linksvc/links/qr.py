"""QR codes of short links (segno: pure Python, SVG and PNG without an imaging library)."""

from __future__ import annotations

import io

import segno

CONTENT_TYPES = {"svg": "image/svg+xml", "png": "image/png"}


def qr_image(url: str, kind: str, scale: int) -> tuple[bytes, str]:
    """The QR code of ``url`` (error correction M, a quiet zone of four modules)."""
    code = segno.make(url, error="m", micro=False)
    out = io.BytesIO()
    if kind == "svg":
        code.save(out, kind="svg", scale=scale, xmldecl=False)
    else:
        code.save(out, kind="png", scale=scale)
    return out.getvalue(), CONTENT_TYPES[kind]
