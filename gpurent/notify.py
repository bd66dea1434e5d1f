"""Sending notifications through apprise URLs (DingTalk, WeCom, Feishu/Lark, Telegram, email,
ntfy, a JSON webhook as ``json://host:port/path`` ...), and keeping their secrets out of sight.

Rule of truth 8: a URL may reference environment variables as ``${NAME}``, expanded only at
send time, so a bot token can live in the environment instead of the database. URLs are
never shown in full: ``mask_url`` keeps the scheme and host and hides what apprise calls
private (tokens, passwords), and error texts are scrubbed of every secret-looking piece of
the URL before they are stored or printed.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from collections.abc import Mapping
from urllib.parse import urlsplit

import apprise

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
# Pieces of a URL at least this long are treated as possible secrets when scrubbing errors.
_SECRET_PIECE_MIN = 6


class NotifyError(Exception):
    """A URL could not be used, or a notification was not accepted (message is safe to show)."""


def env_refs(url: str) -> list[str]:
    """The ``${NAME}`` variables a URL references, in order."""
    return _ENV_REF.findall(url)


def expand_url(url: str, env: Mapping[str, str] | None = None) -> str:
    """The URL with every ``${NAME}`` replaced from the environment; NotifyError if unset."""
    source = os.environ if env is None else env
    missing = [name for name in env_refs(url) if not source.get(name)]
    if missing:
        raise NotifyError(f"environment variable(s) not set: {', '.join(missing)}")
    return _ENV_REF.sub(lambda m: source[m.group(1)], url)


def _plugin(url: str) -> apprise.plugins.NotifyBase | None:
    return apprise.Apprise.instantiate(url, suppress_exceptions=True)


def validate_url(url: str, env: Mapping[str, str] | None = None) -> None:
    """Raise NotifyError unless apprise accepts the URL (after expanding ``${NAME}``)."""
    expanded = expand_url(url, env)
    if _plugin(expanded) is None:
        scheme = urlsplit(url).scheme or "?"
        raise NotifyError(
            f"apprise does not accept this {scheme}:// URL (see "
            "https://github.com/caronc/apprise/wiki for the URL of each service)"
        )


def holds_secret(url: str) -> bool:
    """Apprise hides part of this URL when asked for privacy: it has a literal secret in it."""
    if env_refs(url):
        return False
    plugin = _plugin(url)
    if plugin is None:
        return False
    return _strip_query(plugin.url(privacy=True)) != _strip_query(plugin.url(privacy=False))


def _strip_query(url: str) -> str:
    return url.split("?", 1)[0]


def mask_url(url: str) -> str:
    """A form of the URL that is safe to print: ``${NAME}`` references are shown as they
    are (they are not secrets), anything else through apprise's privacy mode, options
    dropped; a URL apprise cannot read shows only its scheme and host."""
    if env_refs(url):
        return _strip_query(url)
    plugin = _plugin(url)
    if plugin is not None:
        return _strip_query(plugin.url(privacy=True))
    parts = urlsplit(url)
    host = parts.hostname or ""
    return f"{parts.scheme}://{host}/***" if parts.scheme else "***"


def scrub(text: str, url: str) -> str:
    """``text`` with every secret-looking piece of ``url`` (and of its expansion) replaced."""
    candidates = {url}
    with contextlib.suppress(NotifyError):
        candidates.add(expand_url(url))
    pieces: set[str] = set()
    for candidate in candidates:
        pieces.update(p for p in re.split(r"[/:@?&=#,;]+", candidate) if p)
    for piece in sorted(pieces, key=len, reverse=True):
        if len(piece) >= _SECRET_PIECE_MIN and not _is_harmless(piece):
            text = text.replace(piece, "***")
    return text


def _is_harmless(piece: str) -> bool:
    # Host names and well-known words help a reader and are not secrets.
    return bool(re.fullmatch(r"[a-z0-9.-]+\.[a-z]{2,}|[0-9.]+|localhost", piece))


def send(url: str, title: str, body: str) -> None:
    """Send one notification to one apprise URL; raise NotifyError (scrubbed) on failure."""
    expanded = expand_url(url)
    notifier = apprise.Apprise()
    if not notifier.add(expanded):
        raise NotifyError(f"apprise does not accept the URL {mask_url(url)}")
    with apprise.LogCapture(level=logging.WARNING) as captured:
        ok = notifier.notify(body=body, title=title)
        logs = captured.getvalue()
    if not ok:
        reason = _last_lines(logs) or "the service did not accept the notification"
        raise NotifyError(f"{mask_url(url)}: {scrub(reason, url)}")


def _last_lines(logs: str, keep: int = 2) -> str:
    lines = [re.sub(r"^\S+ \S+ - [A-Z]+ - ", "", line).strip() for line in logs.splitlines()]
    return " | ".join([line for line in lines if line][-keep:])
