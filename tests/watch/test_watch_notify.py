"""Apprise sending over real HTTP on 127.0.0.1, URL validation, and secrets kept out of sight."""

from __future__ import annotations

import pytest

from gpurent_core.notify import (
    NotifyError,
    expand_url,
    holds_secret,
    mask_url,
    scrub,
    send,
    validate_url,
)
from tests.watch.watch_kit import free_port, receiving

TELEGRAM = "tgram://123456789:AAHsecretTokenValue42/987654"
MAIL = "mailto://alice:hunter2pass@example.com"


def test_the_json_webhook_gets_title_and_body() -> None:
    with receiving() as hook:
        send(hook.url, "gpurent: RTX 4090 available", "2 free card(s)\n¥1.98/h")
    (post,) = hook.received()
    assert post["path"] == "/hook"
    assert post["json"]["title"] == "gpurent: RTX 4090 available"
    assert post["json"]["message"] == "2 free card(s)\n¥1.98/h"


def test_a_receiver_that_is_down_raises_without_the_secret() -> None:
    port = free_port()
    url = f"json://user:s3cretPassw0rd@127.0.0.1:{port}/hook"
    with pytest.raises(NotifyError) as caught:
        send(url, "t", "b")
    assert "s3cretPassw0rd" not in str(caught.value)
    assert "127.0.0.1" in str(caught.value)


def test_an_error_status_is_a_failure() -> None:
    with receiving() as hook:
        hook.status = 500
        with pytest.raises(NotifyError):
            send(hook.url, "t", "b")
        assert len(hook.received()) == 1


def test_urls_are_validated_by_apprise() -> None:
    validate_url("json://127.0.0.1:8080/hook")
    validate_url(TELEGRAM)
    validate_url("ntfy://ntfy.sh/gpurent-alerts")
    for bad in ("nonsense://x", "https://", "not a url"):
        with pytest.raises(NotifyError):
            validate_url(bad)


def test_masked_urls_hide_secrets_and_keep_the_destination() -> None:
    assert "AAHsecretTokenValue42" not in mask_url(TELEGRAM)
    assert mask_url(TELEGRAM).startswith("tgram://")
    assert "hunter2pass" not in mask_url(MAIL)
    assert "example.com" in mask_url(MAIL)
    assert mask_url("json://127.0.0.1:8080/hook") == "json://127.0.0.1:8080/hook"
    assert "s3cret" not in mask_url("weird://user:s3cret@host/x")


def test_holds_secret_tells_literal_secrets_from_env_references() -> None:
    assert holds_secret(TELEGRAM)
    assert holds_secret(MAIL)
    assert not holds_secret("json://127.0.0.1:8080/hook")
    assert not holds_secret("tgram://${TG_BOT}/987654")


def test_env_references_expand_at_send_time_only(monkeypatch: pytest.MonkeyPatch) -> None:
    url = "json://${HOOK_HOST}:${HOOK_PORT}/hook"
    with pytest.raises(NotifyError, match="HOOK_HOST, HOOK_PORT"):
        expand_url(url)
    with receiving() as hook:
        monkeypatch.setenv("HOOK_HOST", "127.0.0.1")
        monkeypatch.setenv("HOOK_PORT", str(hook.port))
        validate_url(url)
        send(url, "t", "b")
        assert len(hook.received()) == 1
    assert mask_url(url) == url  # references are not secrets: shown as written


def test_scrub_removes_the_expanded_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TG_BOT", "123456789:AAHsecretTokenValue42")
    text = "error posting to https://api.telegram.org/bot123456789:AAHsecretTokenValue42/send"
    cleaned = scrub(text, "tgram://${TG_BOT}/987654")
    assert "AAHsecretTokenValue42" not in cleaned
    assert "api.telegram.org" in cleaned
