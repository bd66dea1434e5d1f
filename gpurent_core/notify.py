"""Sending notifications through apprise URLs (DingTalk, WeCom, Feishu/Lark, Telegram, email,
ntfy, a JSON webhook as ``json://host:port/path`` ...), and keeping their secrets out of sight.

Rule of truth 8: secrets never reach the warehouse. A destination is stored as one of

- an apprise URL whose secrets are environment references, ``${NAME}``, expanded only at
  send time (``tgram://${TG_BOT_TOKEN}/CHAT_ID``, ``json://me:${HOOK_PW}@host/hook``);
- a reference to an apprise configuration file, ``apprise-config:///abs/path.yml``
  (``watch add --notify-config PATH``): the file holds the URLs, secrets included, and
  stays where the user keeps it; only its path is stored.

``literal_secrets`` finds what must not be stored (a password in the address, or a part
apprise's privacy mode hides for that service: a bot token, a webhook key), so callers can
refuse it. URLs are never shown in full: ``mask_url`` keeps the scheme and host and hides
what apprise calls private, and error texts are scrubbed of every secret-looking piece of
the URL (and of its expansion, and of a config file's URLs) before they are stored or
printed.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit

import apprise

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
# Pieces of a URL at least this long are treated as possible secrets when scrubbing errors.
_SECRET_PIECE_MIN = 6
_PIECES = re.compile(r"[/:@?&=#,;]+")
_SECRET_WORDS = frozenset(
    [
        "token",
        "key",
        "secret",
        "password",
        "passwd",
        "pass",
        "pwd",
        "auth",
        "authorization",
        "credential",
        "credentials",
        "signature",
        "sig",
        "sign",
        "session",
        "apikey",
        "appkey",
        "accesskey",
        "secretkey",
        "authkey",
    ]
)
"""Words of URL option names that carry a credential (a `+Header=` is an option to apprise):
``token``, ``access_token``, ``X-Api-Key``, ``+Authorization``; ``monkey`` is not one."""


def _secret_option(name: str) -> bool:
    words = [w for w in re.split(r"[^a-z0-9]+", name.lower()) if w]
    return any(w in _SECRET_WORDS or w.endswith(("token", "secret")) for w in words)


CONFIG_SCHEME = "apprise-config"
"""Stored form of an apprise configuration file: ``apprise-config:///absolute/path``."""


class NotifyError(Exception):
    """A URL could not be used, or a notification was not accepted (message is safe to show)."""


def env_refs(url: str) -> list[str]:
    """The ``${NAME}`` variables a URL references, in order."""
    return _ENV_REF.findall(url)


def config_ref(path: Path) -> str:
    """How a configuration file is stored as a destination (its absolute path)."""
    return f"{CONFIG_SCHEME}://{path.expanduser().resolve().as_posix()}"


def config_path(url: str) -> Path | None:
    """The configuration file a stored destination names, or None for a plain URL."""
    prefix = f"{CONFIG_SCHEME}://"
    return Path(url[len(prefix) :]) if url.startswith(prefix) else None


def _load_config(path: Path) -> apprise.Apprise:
    if not path.is_file():
        raise NotifyError(f"apprise config {path}: no such file")
    config = apprise.AppriseConfig()
    notifier = apprise.Apprise()
    if not config.add(str(path)) or not notifier.add(config) or len(notifier) == 0:
        raise NotifyError(f"apprise config {path}: no notification URL apprise can read in it")
    return notifier


def config_readable_by_others(path: Path) -> bool:
    """The file's mode lets group or others read it (its secrets are only as safe as it)."""
    return bool(path.stat().st_mode & 0o044)


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
    """Raise NotifyError unless apprise accepts the URL (after expanding ``${NAME}``), or
    the configuration file it names holds at least one URL apprise reads."""
    path = config_path(url)
    if path is not None:
        _load_config(path)
        return
    expanded = expand_url(url, env)
    if _plugin(expanded) is None:
        scheme = urlsplit(url).scheme or "?"
        raise NotifyError(
            f"apprise does not accept this {scheme}:// URL (see "
            "https://github.com/caronc/apprise/wiki for the URL of each service)"
        )


def _pieces(url: str) -> set[str]:
    return {p for p in _PIECES.split(unquote(url)) if p}


def literal_secrets(url: str, env: Mapping[str, str] | None = None) -> list[str]:
    """What in ``url`` is a secret written out instead of referenced as ``${NAME}``: a
    password in the address, or a part apprise hides in privacy mode for that service (a
    bot token, a webhook key). Described, never quoted; [] when there is none.

    A hidden part counts as referenced when it comes from the expansion of a ``${NAME}``
    (checked with the variables set, ``env`` or the process environment; a URL whose
    variables are unset can only be checked for a password).
    """
    if config_path(url) is not None:
        return []
    found: list[str] = []
    password = urlsplit(url).password
    if password and _ENV_REF.sub("", password):
        found.append("a password in the address")
    # Whatever the service, a query option named like a credential (`?token=`, `?apikey=`,
    # a `+Authorization=` header of a json:// webhook) is one: apprise's privacy mode hides
    # only the parts it knows of each service, and a generic webhook's options are not.
    named = sorted(
        {
            name
            for name, value in parse_qsl(urlsplit(url).query, keep_blank_values=True)
            if _secret_option(name) and _ENV_REF.sub("", value)
        }
    )
    if named:
        found.append(f"a credential in the option(s) {', '.join(n.strip() for n in named)}")
    source = os.environ if env is None else env
    try:
        expanded = expand_url(url, source)
    except NotifyError:
        return found
    plugin = _plugin(expanded)
    if plugin is None:
        return found
    shown = _pieces(plugin.url(privacy=True))
    hidden = _pieces(plugin.url(privacy=False)) - shown
    values = [source[name] for name in env_refs(url)]
    literal = {p for p in hidden if not any(p in v for v in values)}
    if found:  # the password is already named
        literal.discard(unquote(urlsplit(expanded).password or ""))
    if literal:
        found.append(f"a {urlsplit(url).scheme}:// token or key")
    return found


def holds_secret(url: str, env: Mapping[str, str] | None = None) -> bool:
    """The URL has a literal secret in it (see ``literal_secrets``)."""
    return bool(literal_secrets(url, env))


def _strip_query(url: str) -> str:
    return url.split("?", 1)[0]


def _generic_mask(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    return f"{parts.scheme}://{host}/***" if parts.scheme else "***"


def mask_url(url: str) -> str:
    """A form of the URL that is safe to print: a config file reference and ``${NAME}``
    references are shown as they are (they are not secrets), anything else through
    apprise's privacy mode, options dropped; a URL apprise cannot read, or one that mixes
    references with a literal secret, shows only its scheme and host."""
    if config_path(url) is not None:
        return url
    if env_refs(url):
        return _generic_mask(url) if holds_secret(url) else _strip_query(url)
    plugin = _plugin(url)
    if plugin is not None:
        return _strip_query(plugin.url(privacy=True))
    return _generic_mask(url)


def scrub(text: str, url: str, also: tuple[str, ...] = ()) -> str:
    """``text`` with every secret-looking piece of ``url`` (and of its expansion, and of
    the URLs in ``also``: a config file's) replaced."""
    candidates = {url, *also}
    with contextlib.suppress(NotifyError):
        candidates.add(expand_url(url))
    pieces: set[str] = set()
    for candidate in candidates:
        pieces.update(p for p in re.split(r"[/:@?&=#,;]+", candidate) if p)
        pieces.update(_pieces(candidate))
    for piece in sorted(pieces, key=len, reverse=True):
        if len(piece) >= _SECRET_PIECE_MIN and not _is_harmless(piece):
            text = text.replace(piece, "***")
    return text


def _is_harmless(piece: str) -> bool:
    # Host names and well-known words help a reader and are not secrets.
    return bool(re.fullmatch(r"[a-z0-9.-]+\.[a-z]{2,}|[0-9.]+|localhost", piece))


def send(url: str, title: str, body: str) -> None:
    """Send one notification to one destination (an apprise URL, or every URL of a config
    file); raise NotifyError (scrubbed) on failure.

    A config file is one destination: when one of its services refuses, the retry sends to
    all of them again (apprise reports one verdict for the file).
    """
    path = config_path(url)
    inner: tuple[str, ...] = ()
    if path is not None:
        notifier = _load_config(path)
        inner = tuple(server.url(privacy=False) for server in notifier)
    else:
        notifier = apprise.Apprise()
        if not notifier.add(expand_url(url)):
            raise NotifyError(f"apprise does not accept the URL {mask_url(url)}")
    with apprise.LogCapture(level=logging.WARNING) as captured:
        ok = notifier.notify(body=body, title=title)
        logs = captured.getvalue()
    if not ok:
        reason = _last_lines(logs) or "the service did not accept the notification"
        raise NotifyError(f"{mask_url(url)}: {scrub(reason, url, inner)}")


def _last_lines(logs: str, keep: int = 2) -> str:
    lines = [re.sub(r"^\S+ \S+ - [A-Z]+ - ", "", line).strip() for line in logs.splitlines()]
    return " | ".join([line for line in lines if line][-keep:])
