"""How a one-time link (an invitation, a password reset) reaches its person: a letter through the SMTP server
of ``LINKSVC_SMTP_URL`` (:mod:`linksvc.mail`), and the link in the answer to whoever asked for it, always.

A letter that cannot be sent (no server configured, a refusal, the server away) does not undo the invitation or
the reset: the answer says so in ``letter`` (``sent`` and the server's reply or the reason), and the link is
there to pass on by hand. The link's token travels in the URL's fragment, which a browser never sends to a
server (no Referer, no access log holds it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol
from urllib.parse import quote, urlsplit

from linksvc import mail


@dataclass(frozen=True)
class OneTimeLink:
    purpose: str  # "invitation" or "password_reset"
    email: str  # whom it is for
    url: str
    expires_at: str


class PostSettings(Protocol):
    """What letters need of the service's settings (``linksvc.settings.Settings`` has it)."""

    @property
    def public_url(self) -> str: ...

    @property
    def mail_server(self) -> mail.Server | None: ...

    @property
    def mail_sender(self) -> str: ...


@dataclass(frozen=True)
class Post:
    """Where links point and how letters leave: the public URL, the SMTP server (None: no letters), the From."""

    public_url: str
    server: mail.Server | None = None
    sender: str = ""

    @classmethod
    def of(cls, settings: PostSettings) -> Post:
        return cls(settings.public_url, settings.mail_server, settings.mail_sender)


PAGES = {"invitation": "/dashboard/accept-invitation", "password_reset": "/dashboard/reset-password"}


def link_url(public_url: str, purpose: str, token: str) -> str:
    """The dashboard page that takes the link's token (the token in the fragment: never sent to a server in a
    Referer or an access log)."""
    return f"{public_url.rstrip('/')}{PAGES[purpose]}#token={quote(token)}"


def _until(expires_at: str) -> str:
    return expires_at[:16].replace("T", " ") + " UTC"


def invitation_letter(link: OneTimeLink, account_name: str, role: str, inviter: str, public_url: str
                      ) -> mail.Letter:
    host = urlsplit(public_url).hostname or public_url
    return mail.Letter(
        to=link.email, subject=f"You are invited to {account_name}",
        text=(f"{inviter} invited you to {account_name} on {host}, as {role}.\n\n"
              f"Open this link to accept and choose your password (it works once, until {_until(link.expires_at)}):"
              f"\n\n{link.url}\n\nIf you did not expect this invitation, ignore this letter: nothing happens "
              "without the link.\n"))


def reset_letter(link: OneTimeLink, public_url: str) -> mail.Letter:
    host = urlsplit(public_url).hostname or public_url
    return mail.Letter(
        to=link.email, subject=f"Set a new password for {host}",
        text=(f"Someone with the right to do so asked for a new password for your sign-in on {host}.\n\n"
              f"Open this link to choose it (it works once, until {_until(link.expires_at)}):\n\n{link.url}\n\n"
              "Your password stays as it is until the link is used. If you did not expect this, ignore this "
              "letter.\n"))


async def deliver(post: Post, link: OneTimeLink, letter: mail.Letter) -> mail.Outcome:
    """Sends the letter that carries ``link`` (when a server is configured); what became of it."""
    return await mail.send(post.server, post.sender, letter)
