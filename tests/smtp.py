"""A real SMTP server on 127.0.0.1 for tests (``aiosmtpd``, in its own thread): plain, STARTTLS or TLS from the
first byte, with or without AUTH, refusing the recipients it is told to; it keeps every message it accepted."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.processes import free_port


@dataclass
class Mailbox:
    """What the server saw: its port, the messages it accepted (parsed) and their envelopes."""

    port: int
    messages: list[EmailMessage] = field(default_factory=list)
    envelopes: list[tuple[str, list[str]]] = field(default_factory=list)
    logins: list[str] = field(default_factory=list)


def certificate(folder: Path) -> tuple[ssl.SSLContext, Path]:
    """A server TLS context with a fresh self-signed certificate for 127.0.0.1, and the certificate's PEM file
    (the authority a client is told to trust)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "smtp.crt", folder / "smtp.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    return context, cert_path


@contextmanager
def smtp_server(*, starttls: ssl.SSLContext | None = None, tls: ssl.SSLContext | None = None,
                users: dict[str, str] | None = None, refuse: frozenset[str] = frozenset()) -> Iterator[Mailbox]:
    """An SMTP server: ``starttls`` offers (and requires) STARTTLS with that context; ``tls`` speaks TLS from the
    first byte; ``users`` turns on AUTH (PLAIN and LOGIN, only over TLS); ``refuse`` are recipients answered 550."""
    box = Mailbox(free_port())

    class Handler:
        async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str,
                              rcpt_options: list[str]) -> str:
            if address in refuse:
                return "550 5.1.1 no such mailbox here"
            envelope.rcpt_tos.append(address)
            return "250 OK"

        async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
            parsed = message_from_bytes(envelope.original_content, policy=policy.default)
            assert isinstance(parsed, EmailMessage)
            box.messages.append(parsed)
            box.envelopes.append((envelope.mail_from, list(envelope.rcpt_tos)))
            return "250 2.0.0 queued as test-1"

    def authenticate(server: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> AuthResult:
        if isinstance(data, LoginPassword) and users is not None:
            login, password = data.login.decode(), data.password.decode()
            if users.get(login) == password:
                box.logins.append(login)
                return AuthResult(success=True)
        return AuthResult(success=False, handled=False)

    options: dict[str, Any] = {}
    if users is not None:
        # Over TLS from the first byte the session is already private (aiosmtpd counts only STARTTLS as TLS).
        options |= {"authenticator": authenticate, "auth_require_tls": tls is None}
    if starttls is not None:
        options |= {"tls_context": starttls, "require_starttls": True}
    controller = Controller(Handler(), hostname="127.0.0.1", port=box.port, ssl_context=tls,
                            server_hostname="127.0.0.1", **options)
    controller.start()
    try:
        yield box
    finally:
        controller.stop()
