"""Email through a real SMTP server on 127.0.0.1 (aiosmtpd): each way ``LINKSVC_SMTP_URL`` can protect the
connection, what a refusal says, and ``linksvc mail test`` as an operator runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from linksvc import mail
from linksvc.settings import load_settings
from tests.processes import free_port
from tests.smtp import certificate, smtp_server

LETTER = mail.Letter(to="ana@example.com", subject="You are invited to Acme's links",
                     text="Open https://links.example.com/invite/abc to join.\n")


async def test_starttls_with_a_password_delivers_the_letter(tmp_path: Path) -> None:
    context, ca = certificate(tmp_path)
    with smtp_server(starttls=context, users={"mailer@example.com": "p@ss word"}) as box:
        url = f"smtp://mailer%40example.com:p%40ss%20word@127.0.0.1:{box.port}"
        settings = load_settings({"LINKSVC_SMTP_URL": url, "LINKSVC_SMTP_CA_FILE": str(ca),
                                  "LINKSVC_SMTP_FROM": "Acme links <links@example.com>"})
        outcome = await mail.send(settings.mail_server, settings.mail_sender, LETTER)
        assert outcome.sent, outcome.detail
        assert "queued as test-1" in outcome.detail
        assert box.logins == ["mailer@example.com"]
        [message] = box.messages
        assert box.envelopes == [("links@example.com", ["ana@example.com"])]
        assert message["From"] == "Acme links <links@example.com>"
        assert message["To"] == "ana@example.com"
        assert message["Subject"] == LETTER.subject
        assert message["Auto-Submitted"] == "auto-generated"
        assert message["Message-ID"].endswith("@example.com>")
        assert message.get_content().replace("\r\n", "\n") == LETTER.text


async def test_tls_from_the_first_byte(tmp_path: Path) -> None:
    context, ca = certificate(tmp_path)
    with smtp_server(tls=context) as box:
        server = mail.server_of(f"smtps://127.0.0.1:{box.port}", str(ca))
        outcome = await mail.send(server, "links@example.com", LETTER)
        assert outcome.sent, outcome.detail
        assert [m["To"] for m in box.messages] == ["ana@example.com"]


async def test_a_relay_without_tls(tmp_path: Path) -> None:
    with smtp_server() as box:
        outcome = await mail.send(mail.server_of(f"smtp+insecure://127.0.0.1:{box.port}"), "links@example.com",
                                  LETTER)
        assert outcome.sent, outcome.detail
        assert len(box.messages) == 1


async def test_what_each_refusal_says_and_nothing_is_sent(tmp_path: Path) -> None:
    context, ca = certificate(tmp_path)
    with smtp_server(starttls=context, users={"mailer": "right"}) as box:
        wrong = mail.server_of(f"smtp://mailer:wrong-secret@127.0.0.1:{box.port}", str(ca))
        outcome = await mail.send(wrong, "links@example.com", LETTER)
        assert not outcome.sent
        assert "refused the user name or password" in outcome.detail and "535" in outcome.detail
        assert "wrong-secret" not in outcome.detail
        untrusted = mail.server_of(f"smtp://mailer:right@127.0.0.1:{box.port}")  # the system's authorities
        outcome = await mail.send(untrusted, "links@example.com", LETTER)
        assert not outcome.sent and "LINKSVC_SMTP_CA_FILE" in outcome.detail
        assert box.messages == []
    with smtp_server(refuse=frozenset({"ana@example.com"})) as box:
        outcome = await mail.send(mail.server_of(f"smtp+insecure://127.0.0.1:{box.port}"), "links@example.com",
                                  LETTER)
        assert not outcome.sent and "550" in outcome.detail and "ana@example.com" in outcome.detail
        # smtp:// requires STARTTLS: a server that does not offer it gets no letter (nor a password).
        outcome = await mail.send(mail.server_of(f"smtp://127.0.0.1:{box.port}", str(ca)), "links@example.com",
                                  LETTER)
        assert not outcome.sent and "STARTTLS" in outcome.detail
        assert box.messages == []
    port = free_port()  # nobody listens there
    outcome = await mail.send(mail.server_of(f"smtp+insecure://127.0.0.1:{port}"), "links@example.com", LETTER)
    assert not outcome.sent and f"could not reach 127.0.0.1:{port}" in outcome.detail


async def test_without_a_server_nothing_is_sent() -> None:
    outcome = await mail.send(None, "links@example.com", LETTER)
    assert not outcome.sent and "LINKSVC_SMTP_URL" in outcome.detail


def _linksvc(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "linksvc", *args], env={**os.environ, **env}, capture_output=True,
                          text=True, timeout=60)


@pytest.mark.parametrize("security", ["starttls", "tls"])
def test_mail_test_command(tmp_path: Path, security: str) -> None:
    context, ca = certificate(tmp_path)
    given = {"starttls": context} if security == "starttls" else {"tls": context}
    with smtp_server(users={"ops": "pw-123456"}, **given) as box:  # type: ignore[arg-type]
        scheme = "smtp" if security == "starttls" else "smtps"
        env = {"LINKSVC_SMTP_URL": f"{scheme}://ops:pw-123456@127.0.0.1:{box.port}", "LINKSVC_SMTP_CA_FILE": str(ca),
               "LINKSVC_PUBLIC_URL": "https://links.example.com"}
        done = _linksvc("mail", "test", "ops@example.com", env=env)
        assert done.returncode == 0, done.stderr
        assert "accepted by 127.0.0.1" in done.stdout
        [message] = box.messages
        assert message["From"] == "linksvc <no-reply@links.example.com>"
        assert "https://links.example.com" in message.get_content()
        done = _linksvc("mail", "test", "ops@example.com", env={**env, "LINKSVC_SMTP_URL":
                                                                 f"{scheme}://ops:not-it-999@127.0.0.1:{box.port}"})
        assert done.returncode == 1 and "refused the user name or password" in done.stderr
        assert "not-it-999" not in done.stderr + done.stdout
    done = _linksvc("mail", "test", "ops@example.com", env={"LINKSVC_SMTP_URL": ""})
    assert done.returncode == 1 and "LINKSVC_SMTP_URL" in done.stderr
    done = _linksvc("mail", "test", "not an address", env={})
    assert done.returncode == 2 and "not an email address" in done.stderr
