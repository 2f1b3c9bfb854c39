"""What a secret looks like when shown: the mask, secret-named config values, and credentials in URLs.

Reads of the admin API, log lines, delivery errors and settings reprs all go through here, so the rules
are in one place:

- a config member named like a secret (:func:`is_secret_name`) is shown as :data:`SECRET_MASK`, and so is
  everything under it, leaf by leaf;
- a URL's userinfo (``user:password@``, or a token alone before ``@``) is shown as the mask:
  ``https://user:pa55w0rd@hooks.example.com/x`` reads ``https://********@hooks.example.com/x``. The user name is
  hidden too, since a token is often sent as one. Where the userinfo ends is decided as ``yarl`` (and so
  aiohttp, which sends it as Basic credentials) decides it: at the last ``@`` before the first ``/``, ``?``
  or ``#`` of the authority. Any string is scanned, at any depth, also URLs inside longer text.

An edit that sends a masked value back keeps the stored one (:func:`unmask_config`). A URL whose masked
userinfo comes back with the same scheme and host (its path or query may change) gets the stored
credentials; with another host it is refused, so that an edit can never send the stored credentials
somewhere new without the client typing them again.
"""

from __future__ import annotations

import re
from dataclasses import fields
from typing import Any
from urllib.parse import unquote

from linksvc.errors import InvalidField

SECRET_MASK = "********"
# A config key naming one of these (any case, dashes as underscores) holds a secret, and so does everything
# under it.
_SECRET_WORDS = ("secret", "token", "password", "passwd", "api_key", "apikey", "access_key", "private_key",
                 "credential", "authorization", "signature")
# scheme:// (or a scheme-relative //), the userinfo up to the last "@" of the authority, the "@".
_USERINFO = re.compile(r"((?:[A-Za-z][A-Za-z0-9+.\-]*:)?//)([^/?#]*)@")
# A whole value that is one URL: its scheme, userinfo, host and port, and the rest.
_WHOLE_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*://)(?:([^/?#]*)@)?([^/?#]*)(.*)$", re.DOTALL)
_SHORTEST_REDACTED = 4  # shorter credential parts are masked in URLs only, not wherever they occur in text


def is_secret_name(key: str) -> bool:
    lowered = key.lower().replace("-", "_")
    return any(word in lowered for word in _SECRET_WORDS)


def mask_url_credentials(text: str) -> str:
    """``text`` with the userinfo of every URL in it replaced by the mask."""
    if "@" not in text:
        return text
    return _USERINFO.sub(lambda m: f"{m.group(1)}{SECRET_MASK}@" if m.group(2) else m.group(0), text)


def masked_repr(obj: Any) -> str:
    """A dataclass's ``repr`` with URL credentials masked in its text fields (``repr=False`` fields left out,
    as the generated ``repr`` does)."""
    shown = []
    for item in fields(obj):
        if item.repr:
            value = getattr(obj, item.name)
            shown.append(f"{item.name}={mask_url_credentials(value) if isinstance(value, str) else value!r}")
    return f"{type(obj).__name__}({', '.join(shown)})"


def redact_error(text: str, url: str) -> str:
    """An error message about a request to ``url``, fit to store and show: URL credentials masked, and the
    credentials of ``url`` masked wherever else they occur (a library may quote them decoded)."""
    text = mask_url_credentials(text)
    whole = _WHOLE_URL.match(url)
    if whole is None or not whole.group(2):
        return text
    userinfo = whole.group(2)
    pieces = {userinfo, *userinfo.split(":", 1)}
    parts = pieces | {unquote(piece) for piece in pieces}
    for part in sorted(parts, key=len, reverse=True):
        if len(part) >= _SHORTEST_REDACTED:
            text = text.replace(part, SECRET_MASK)
    return text


def mask_config(value: Any, hidden: bool = False) -> Any:
    """Secret-named values hidden at any depth of a config (a secret-named list or object is hidden leaf by
    leaf: its shape stays, so an edit can send it back), and URL credentials in every other string."""
    if isinstance(value, dict):
        return {k: mask_config(v, hidden or is_secret_name(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [mask_config(v, hidden) for v in value]
    if hidden and value not in (None, "") and not isinstance(value, bool):
        return SECRET_MASK
    return mask_url_credentials(value) if isinstance(value, str) else value


def _restore_url(given: str, stored: Any, path: str) -> str:
    """A string holding masked URL credentials, with the stored credentials put back."""
    if isinstance(stored, str) and mask_url_credentials(stored) == given:
        return stored  # sent back as it was read
    new, old = _WHOLE_URL.match(given), _WHOLE_URL.match(stored) if isinstance(stored, str) else None
    if (new is not None and old is not None and new.group(2) == SECRET_MASK and old.group(2)
            and new.group(1).lower() == old.group(1).lower() and new.group(3).lower() == old.group(3).lower()):
        return f"{new.group(1)}{old.group(2)}@{new.group(3)}{new.group(4)}"
    raise InvalidField(path, f"holds masked credentials ({SECRET_MASK}@) that can be kept only for the same "
                             "scheme and host as stored; send the credentials again", rule="url")


def _has_masked_credentials(text: str) -> bool:
    return any(m.group(2) == SECRET_MASK for m in _USERINFO.finditer(text))


def unmask_config(given: Any, stored: Any, path: str = "config") -> Any:
    """An edit's config with every mask sent back replaced by the stored value in the same place."""
    if isinstance(given, dict):
        old = stored if isinstance(stored, dict) else {}
        return {k: unmask_config(v, old.get(k), f"{path}.{k}") for k, v in given.items()}
    if isinstance(given, list):
        olds = stored if isinstance(stored, list) else []
        return [unmask_config(v, olds[i] if i < len(olds) else None, f"{path}[{i}]") for i, v in enumerate(given)]
    if given == SECRET_MASK and stored is not None:
        return stored
    if isinstance(given, str) and "@" in given and _has_masked_credentials(given):
        return _restore_url(given, stored, path)
    return given
