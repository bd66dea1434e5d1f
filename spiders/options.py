"""The crawl settings gpurent's own code reads, typed, checked and read once: `SpiderOptions`.

Every setting here is declared once, in `SpiderOptions`: its Scrapy setting name
(`SETTING_NAMES`), its type, its default (the field's default) and what it means (the field's
docstring, with an example). ``spiders.settings`` takes its values from `DEFAULTS`; the spider
base, the middlewares, the RunReport extension and the browser base read
``SpiderOptions.from_settings(settings)`` instead of asking Scrapy's settings themselves.

Pass any of them with ``-s NAME=value`` (``scrapy crawl vastai -s GPURENT_MAX_PAGES=50``). A
value that cannot be read as its type, or is out of range, is refused with a
`SpiderOptionError` naming the setting, the value and what was expected: the crawl stops at
start-up rather than run on a guess.

Secrets never go through settings (Scrapy logs overridden settings): provider tokens come
from the environment (e.g. ``AUTODL_TOKEN``), and so does the Chromium binary
(``GPURENT_CHROMIUM``, else ``chromium`` on PATH; see ``gpurent_core.config``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from scrapy.settings import BaseSettings

T = TypeVar("T")


class SpiderOptionError(ValueError):
    """A setting whose value cannot be used; the message names the setting and the value."""

    def __init__(self, setting: str, value: Any, expected: str) -> None:
        super().__init__(f"setting {setting}={value!r}: expected {expected}")
        self.setting = setting
        self.value = value
        self.expected = expected


@dataclass(frozen=True)
class SpiderOptions:
    """What a crawl was asked to do, as read from its Scrapy settings (see the module doc)."""

    base_url: str | None = None
    """GPURENT_BASE_URL (text; default None: the spider's real provider URL). The base URL the
    spider calls instead, e.g. ``http://127.0.0.1:8765/vastai`` (the replay server). Blank is
    unset."""

    run_id: str | None = None
    """GPURENT_RUN_ID (text; default None: a generated UTC stamp). The run id stamped on every
    feed line and on the run report, e.g. ``20261004T120000Z-1a2b3c``. Blank is unset."""

    run_report: Path | None = None
    """GPURENT_RUN_REPORT (path; default None: no report file). Where the JSON run report is
    written when the spider closes, e.g. ``/tmp/vastai.report.json`` (fields:
    ``spiders.ledger.REPORT_FIELDS``). Blank is unset."""

    page_size: int | None = None
    """GPURENT_PAGE_SIZE (whole number >= 0; default None: the spider's own, Vast.ai 500,
    AutoDL 20). Offers asked per page where the provider API pages, e.g. ``100``; 0 or blank
    is unset."""

    max_pages: int = 200
    """GPURENT_MAX_PAGES (whole number >= 1; default 200). Safety stop for pagination loops,
    e.g. ``50``. A listing that still has pages when it is reached ends the run `partial`
    (report field ``page_cap_reached``), never `ok`: the market was cut off. Raise it for
    markets larger than 200 pages."""

    retry_after_max_s: float = 60.0
    """GPURENT_RETRY_AFTER_MAX (seconds >= 0; default 60.0). The longest wait a 429/503
    Retry-After may impose before the retry, e.g. ``5``; a longer wait asked is cut to it."""

    retry_enabled: bool = True
    """RETRY_ENABLED (Scrapy's; true/false; default True). Whether failed downloads and the
    statuses of `retry_http_codes` are retried; the Retry-After wait only happens before a
    retry."""

    retry_times: int = 3
    """RETRY_TIMES (Scrapy's; whole number >= 0; default 3). Retries of one request, e.g.
    ``0`` to give up at the first failure (a request's ``max_retry_times`` meta wins)."""

    retry_http_codes: tuple[int, ...] = (429, 500, 502, 503, 504, 522, 524, 408)
    """RETRY_HTTP_CODES (Scrapy's; HTTP statuses; default 429, 500, 502, 503, 504, 522, 524,
    408). The answers that are retried, e.g. ``500,503``."""

    download_timeout_s: float = 30.0
    """DOWNLOAD_TIMEOUT (Scrapy's; seconds > 0; default 30.0). How long one download may
    take before it counts as a timeout (and is retried), e.g. ``10``."""

    navigation_timeout_ms: int = 30_000
    """PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT (scrapy-playwright's; ms >= 0; default 30000).
    Browser spiders only: how long Chromium may take to load a page, e.g. ``60000``."""

    table_wait_ms: int = 15_000
    """GPURENT_TABLE_WAIT_MS (ms >= 0; default 15000). Browser spiders only: how long a page's
    script may take to build its price table before the page counts as changed (a layout
    error), e.g. ``30000``."""

    browser_contexts: int = 1
    """PLAYWRIGHT_MAX_CONTEXTS (scrapy-playwright's; whole number >= 1; default 1). Browser
    spiders only: browser contexts open at once (one page at a time is polite enough)."""

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> SpiderOptions:
        """Read every option from `settings` (a missing or None setting takes its default);
        raises `SpiderOptionError` on a value that cannot be used."""
        read = _Reader(settings)
        return cls(
            base_url=read.text("base_url"),
            run_id=read.text("run_id"),
            run_report=_path(read.text("run_report")),
            page_size=read.whole("page_size", least=0) or None,
            max_pages=_required(read.whole("max_pages", least=1)),
            retry_after_max_s=_required(read.number("retry_after_max_s", least=0.0)),
            retry_enabled=read.flag("retry_enabled"),
            retry_times=_required(read.whole("retry_times", least=0)),
            retry_http_codes=read.statuses("retry_http_codes"),
            download_timeout_s=_required(
                read.number("download_timeout_s", least=0.0, inclusive=False)
            ),
            navigation_timeout_ms=_required(read.whole("navigation_timeout_ms", least=0)),
            table_wait_ms=_required(read.whole("table_wait_ms", least=0)),
            browser_contexts=_required(read.whole("browser_contexts", least=1)),
        )


SETTING_NAMES: Mapping[str, str] = {
    "base_url": "GPURENT_BASE_URL",
    "run_id": "GPURENT_RUN_ID",
    "run_report": "GPURENT_RUN_REPORT",
    "page_size": "GPURENT_PAGE_SIZE",
    "max_pages": "GPURENT_MAX_PAGES",
    "retry_after_max_s": "GPURENT_RETRY_AFTER_MAX",
    "retry_enabled": "RETRY_ENABLED",
    "retry_times": "RETRY_TIMES",
    "retry_http_codes": "RETRY_HTTP_CODES",
    "download_timeout_s": "DOWNLOAD_TIMEOUT",
    "navigation_timeout_ms": "PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT",
    "table_wait_ms": "GPURENT_TABLE_WAIT_MS",
    "browser_contexts": "PLAYWRIGHT_MAX_CONTEXTS",
}
"""The Scrapy setting each `SpiderOptions` field is read from."""

DEFAULTS = SpiderOptions()
"""Every option at its default: where ``spiders.settings`` takes its values from."""


def _required(value: T | None) -> T:
    # The readers return None only for a field whose default is None; these have defaults.
    assert value is not None
    return value


def _path(text: str | None) -> Path | None:
    return Path(text) if text is not None else None


class _Reader:
    """Reads one field's setting: the raw value, or the field's default when absent/None."""

    def __init__(self, settings: BaseSettings) -> None:
        self.settings = settings

    def raw(self, field: str) -> tuple[str, Any]:
        name = SETTING_NAMES[field]
        value = self.settings.get(name)
        return name, getattr(DEFAULTS, field) if value is None else value

    def text(self, field: str) -> str | None:
        name, value = self.raw(field)
        if value is None:
            return None
        if not isinstance(value, str | Path):
            raise SpiderOptionError(name, value, "text")
        text = str(value).strip()
        return text or None

    def whole(self, field: str, *, least: int) -> int | None:
        name, value = self.raw(field)
        if value is None or (isinstance(value, str) and not value.strip()):
            return getattr(DEFAULTS, field)
        expected = f"a whole number >= {least}"
        if isinstance(value, bool):
            raise SpiderOptionError(name, value, expected)
        try:
            number = int(value.strip()) if isinstance(value, str) else int(value)
        except (TypeError, ValueError):
            raise SpiderOptionError(name, value, expected) from None
        if isinstance(value, float) and number != value:
            raise SpiderOptionError(name, value, expected)
        if number < least:
            raise SpiderOptionError(name, value, expected)
        return number

    def number(self, field: str, *, least: float, inclusive: bool = True) -> float:
        name, value = self.raw(field)
        expected = f"a number of seconds {'>=' if inclusive else '>'} {least:g}"
        if isinstance(value, bool):
            raise SpiderOptionError(name, value, expected)
        try:
            number = float(value.strip()) if isinstance(value, str) else float(value)
        except (TypeError, ValueError):
            raise SpiderOptionError(name, value, expected) from None
        if math.isnan(number) or number < least or (not inclusive and number == least):
            raise SpiderOptionError(name, value, expected)
        return number

    def flag(self, field: str) -> bool:
        name = SETTING_NAMES[field]
        if self.settings.get(name) is None:
            return bool(getattr(DEFAULTS, field))
        try:
            # Scrapy's own reading: True/False, "true"/"false", 1/0, "1"/"0".
            return self.settings.getbool(name)
        except ValueError:
            raise SpiderOptionError(name, self.settings.get(name), "true or false") from None

    def statuses(self, field: str) -> tuple[int, ...]:
        name, value = self.raw(field)
        items = value.split(",") if isinstance(value, str) else value
        expected = "HTTP statuses (100-599), e.g. 500,503"
        if not isinstance(items, list | tuple | set | frozenset):
            raise SpiderOptionError(name, value, expected)
        codes: list[int] = []
        for item in items:
            try:
                code = int(item.strip()) if isinstance(item, str) else int(item)
            except (TypeError, ValueError):
                raise SpiderOptionError(name, value, expected) from None
            if isinstance(item, bool) or not 100 <= code <= 599:
                raise SpiderOptionError(name, value, expected)
            codes.append(code)
        return tuple(codes)
