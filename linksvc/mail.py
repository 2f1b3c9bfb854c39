"""Email: the letters the service sends (invitations, password resets), through the SMTP server that
``LINKSVC_SMTP_URL`` names, with ``aiosmtplib``.

The URL says how to reach the server and how to protect the connection:

- ``smtp://user:password@mail.example.com:587``: STARTTLS, required (a server that does not offer it is
  refused, so a password never crosses the network in clear). The default port is 587.
- ``smtps://user:password@mail.example.com``: TLS from the first byte ("implicit TLS", RFC 8314). Port 465.
- ``smtp+insecure://relay.internal:25``: no TLS at all, for a relay on the same machine or network. Credentials
  are refused in such a URL.

The server's certificate is checked against the system's authorities, or against ``LINKSVC_SMTP_CA_FILE`` (a
PEM bundle) for a private one. Without ``LINKSVC_SMTP_URL`` the service sends nothing: whoever asks for an
invitation or a reset is shown its link to pass on, as they are anyway.

A letter that cannot be sent never fails what asked for it: :func:`send` answers an :class:`Outcome` that says
what the server said (the reply to the message, or why it was refused), with credentials masked."""

from __future__ import annotations

import logging
import ssl
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formataddr, make_msgid, parseaddr
from urllib.parse import unquote

import aiosmtplib
from yarl import URL

from linksvc.redaction import redact_error

log = logging.getLogger("linksvc.mail")

SCHEMES = {"smtp": 587, "smtps": 465, "smtp+insecure": 25}


class MailSettingsError(ValueError):
    """``LINKSVC_SMTP_URL`` or ``LINKSVC_SMTP_FROM`` cannot be used (the message says why, without secrets)."""


@dataclass(frozen=True)
class Server:
    """Where letters go, read from ``LINKSVC_SMTP_URL`` by :func:`server_of`."""

    host: str
    port: int
    security: str  # "starttls", "tls" or "none"
    username: str | None
    password: str | None
    ca_file: str | None
    timeout_seconds: float

    def __repr__(self) -> str:  # never the password
        who = f"{self.username}@" if self.username else ""
        return f"Server({who}{self.host}:{self.port}, {self.security})"


@dataclass(frozen=True)
class Letter:
    to: str
    subject: str
    text: str


@dataclass(frozen=True)
class Outcome:
    """What became of a letter: ``sent`` when the server accepted it; ``detail`` its reply or the reason."""

    sent: bool
    detail: str

    def view(self) -> dict[str, object]:
        return {"sent": self.sent, "detail": self.detail}


def server_of(url: str, ca_file: str = "", timeout_seconds: float = 10.0) -> Server | None:
    """The server ``url`` names (None when empty: mail is off). Raises :class:`MailSettingsError`."""
    url = url.strip()
    if not url:
        return None
    try:
        parsed = URL(url)
        port = parsed.port
    except (ValueError, TypeError, UnicodeError):
        raise MailSettingsError("must be smtp://[user:password@]host[:port], smtps://… or smtp+insecure://host"
                                f"[:port], got {redact_error(url, url)!r}") from None
    if parsed.scheme not in SCHEMES or not parsed.host or parsed.path not in ("", "/") or parsed.query_string:
        raise MailSettingsError("must be smtp://[user:password@]host[:port] (STARTTLS), smtps://… (TLS) or "
                                f"smtp+insecure://host[:port] (no TLS), got {redact_error(url, url)!r}")
    security = {"smtp": "starttls", "smtps": "tls", "smtp+insecure": "none"}[parsed.scheme]
    if security == "none" and (parsed.raw_user or parsed.raw_password):
        raise MailSettingsError("smtp+insecure:// takes no user or password: they would cross the network in "
                                "clear; use smtp:// (STARTTLS) or smtps://")
    if parsed.raw_user and parsed.raw_password is None:
        raise MailSettingsError(f"names a user without a password (smtp://user:password@host), got {url!r}")
    return Server(host=parsed.host, port=port or SCHEMES[parsed.scheme], security=security,
                  username=unquote(parsed.raw_user) if parsed.raw_user else None,
                  password=unquote(parsed.raw_password) if parsed.raw_password else None,
                  ca_file=ca_file.strip() or None, timeout_seconds=timeout_seconds)


def sender_of(raw: str, public_host: str) -> str:
    """The ``From`` of every letter: ``raw`` (``Name <address>`` or an address), or ``linksvc <no-reply@host>``
    of the public URL's host. Raises :class:`MailSettingsError` for a value that is not an address."""
    raw = raw.strip()
    if not raw:
        return formataddr(("linksvc", f"no-reply@{public_host}"))
    name, address = parseaddr(raw)
    if "@" not in address or any(c in raw for c in "\r\n"):
        raise MailSettingsError(f"must be an email address, as `Name <no-reply@example.com>`, got {raw!r}")
    return formataddr((name, address)) if name else address


def message_of(letter: Letter, sender: str) -> EmailMessage:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = letter.to
    message["Subject"] = letter.subject
    message["Message-ID"] = make_msgid(domain=parseaddr(sender)[1].rpartition("@")[2] or None)
    message["Auto-Submitted"] = "auto-generated"  # RFC 3834: no vacation replies to a sign-in link
    message.set_content(letter.text)
    return message


def _tls_context(server: Server) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=server.ca_file)


async def send(server: Server | None, sender: str, letter: Letter) -> Outcome:
    """Sends ``letter``; never raises for the server's sake (an unreachable server, a refusal, a bad certificate):
    the :class:`Outcome` says what happened, as does the log."""
    if server is None:
        return Outcome(False, "no mail server is configured (LINKSVC_SMTP_URL)")
    message = message_of(letter, sender)
    try:
        errors, reply = await aiosmtplib.send(
            message, hostname=server.host, port=server.port, username=server.username, password=server.password,
            use_tls=server.security == "tls", start_tls=server.security == "starttls",
            tls_context=_tls_context(server) if server.security != "none" else None,
            timeout=server.timeout_seconds)
    except (aiosmtplib.SMTPException, OSError, ssl.SSLError) as exc:
        detail = _reason(exc, server)
        log.warning("a letter to %s was not sent: %s", letter.to, detail)
        return Outcome(False, detail)
    if errors:  # one recipient only: a refusal of it raises above; kept for completeness
        detail = "; ".join(f"{who}: {code} {text}" for who, (code, text) in errors.items())
        return Outcome(False, f"the server refused {detail}")
    log.info("a letter to %s was accepted by %s:%d", letter.to, server.host, server.port)
    return Outcome(True, f"accepted by {server.host}:{server.port}: {reply.strip()}")


def _reason(exc: BaseException, server: Server) -> str:
    if isinstance(exc, aiosmtplib.SMTPRecipientsRefused):
        text = "; ".join(f"{r.recipient}: {r.code} {r.message}" for r in exc.recipients)
        reason = f"the server refused the recipient ({text})"
    elif isinstance(exc, aiosmtplib.SMTPAuthenticationError):
        reason = f"the server refused the user name or password ({exc.code} {exc.message})"
    elif isinstance(exc, aiosmtplib.SMTPResponseException):
        reason = f"the server answered {exc.code} {exc.message}"
    elif isinstance(exc, aiosmtplib.SMTPException) and "STARTTLS" in str(exc).upper():
        reason = f"the server does not offer STARTTLS, which smtp:// requires ({exc})"
    elif isinstance(exc, ssl.SSLError) or "CERTIFICATE" in str(exc).upper():
        reason = (f"TLS with {server.host} failed ({exc}); for a private authority set LINKSVC_SMTP_CA_FILE")
    elif isinstance(exc, aiosmtplib.SMTPTimeoutError):
        reason = f"{server.host}:{server.port} did not answer within {server.timeout_seconds:g} s"
    elif isinstance(exc, (aiosmtplib.SMTPConnectError, aiosmtplib.SMTPConnectTimeoutError, OSError)):
        reason = f"could not reach {server.host}:{server.port} ({exc or type(exc).__name__})"
    else:
        reason = f"{server.host}:{server.port} could not take the letter ({exc or type(exc).__name__})"
    secrets_ = [s for s in (server.password,) if s]
    for secret in secrets_:
        reason = reason.replace(secret, "********")
    return reason
