"""How a one-time link (an invitation, a password reset) reaches its person.

Today it does not travel: :func:`deliver` returns the link, and the admin API shows it to whoever asked for it
(the inviting owner, or the operator), who passes it on. Sending it by email, when an SMTP server is configured,
is to be added here and nowhere else: the callers already hand over everything a message needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote


@dataclass(frozen=True)
class OneTimeLink:
    purpose: str  # "invitation" or "password_reset"
    email: str  # whom it is for
    url: str
    expires_at: str


PAGES = {"invitation": "/dashboard/accept-invitation", "password_reset": "/dashboard/reset-password"}


def link_url(public_url: str, purpose: str, token: str) -> str:
    """The dashboard page that takes the link's token (the token in the fragment: never sent to a server in a
    Referer or an access log)."""
    return f"{public_url.rstrip('/')}{PAGES[purpose]}#token={quote(token)}"


def deliver(link: OneTimeLink) -> str:
    """Hands the link on; today, returns its URL for the caller to show."""
    return link.url
