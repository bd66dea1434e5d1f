"""The base class of gpurent's provider spiders: settings, run identity, records, run notes.

A provider spider subclasses `ProviderSpider` (`ApiSpider` for an API made for programs,
`spiders.browser.BrowserPageSpider` for a page built by JavaScript), sets `name` and
`default_base_url`, and in its callbacks turns responses into records through the pure
functions of its folder's parser (`spiders.providers.<provider>.parser`); `emit_page()`
yields them as feed dicts and notes layout errors and parsed pages in the run ledger (see
`spiders.ledger`).

The steps every API spider takes the same way live here too: credentials from the
environment (`env_secret`), the JSON request (`json_request`), a refused key
(`key_refused`), an answer that is not JSON (`json_page`), an API error in a 200 answer
(`note_api_error`) and the GPURENT_MAX_PAGES cap (`later_pages`, `page_limit_reached`).
"""

from __future__ import annotations

import json
import logging
import os
import secrets
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any, ClassVar, TypeVar
from urllib.parse import urlsplit

import scrapy
from scrapy.http import Response
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.python.failure import Failure

from gpurent_core.model import utcnow
from gpurent_core.providers import BY_NAME
from spiders.feed_batch import RecordBatch, feeds_take_batches
from spiders.ledger import EVERY_OFFER, AuthState, RunLedger
from spiders.options import SpiderOptions
from spiders.parsers.common import (
    PageResult,
    ParseContext,
    Record,
    SkipRecord,
    load_json,
    make_offer,
    make_quarantine,
)

logger = logging.getLogger(__name__)

Parsed = TypeVar("Parsed")

KEY_REFUSED = (401, 403)
"""HTTP statuses that mean "your key is refused": an answer to read, not an error to retry."""

UNREAD_META = "gpurent_unread"
"""Request meta: what a failure of this request leaves unread, as ``{"keys": [...],
"prefixes": [...]}``. Without it a failed request leaves every offer unread (kept stale):
only a spider that knows which offers a request decides may narrow it."""


def generate_run_id(now: datetime | None = None) -> str:
    """A UTC stamp plus a short random tail, e.g. ``20261004T120000Z-1a2b3c``."""
    stamp = (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{secrets.token_hex(3)}"


def env_secret(name: str) -> str | None:
    """A credential from the environment (blank is unset). It goes into one request header or
    signature and nowhere else: never a log, a setting, the feed or the run report."""
    value = os.environ.get(name, "").strip()
    return value or None


class ProviderSpider(scrapy.Spider):
    """Base of every provider spider (abstract: subclasses set `name` and `default_base_url`)."""

    default_base_url: ClassVar[str] = ""
    """The provider's real base URL; GPURENT_BASE_URL replaces it (replay server)."""
    home: ClassVar[str] = ""
    """Country code of the platform ("CN" for the Chinese ones), shown by `gpurent providers`."""
    needs_browser: ClassVar[bool] = False
    """True when some page is read through Playwright and Chromium."""
    auth_env: ClassVar[tuple[str, ...]] = ()
    """Environment variables holding this provider's credentials (empty: public data only)."""
    min_poll_interval_s: ClassVar[int] = 300
    """Politeness: the watch poll never fetches this provider more often than this."""
    needs_auth: ClassVar[bool] = False
    """True when the provider's main source needs credentials (report `auth` then defaults to
    `unknown` until the spider notes `ok`, `missing` or `rejected`)."""
    default_page_size: ClassVar[int] = 100

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A provider's spider takes its facts (home, credentials, base URL, politeness) from
        its line in ``gpurent_core.providers``, the one list of providers."""
        super().__init_subclass__(**kwargs)
        info = BY_NAME.get(getattr(cls, "name", "") or "")
        if info is None:
            return  # an abstract base (BrowserPageSpider), or a test's own spider
        if cls.needs_browser != info.needs_browser:
            raise TypeError(
                f"{cls.__name__}: needs_browser is {cls.needs_browser}, but gpurent_core."
                f"providers says {info.needs_browser} for {info.name}"
            )
        cls.home = info.home
        cls.auth_env = info.auth_env
        cls.default_base_url = info.default_base_url
        cls.min_poll_interval_s = info.min_poll_interval_s

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.ledger = RunLedger()
        self._run_id: str | None = None
        self._options: SpiderOptions | None = None
        self._batch_feed: bool | None = None

    # -- settings ------------------------------------------------------------

    @property
    def options(self) -> SpiderOptions:
        """The crawl's settings, typed (`spiders.options`): read once, on first use, when
        the crawl has started and its settings are final."""
        if self._options is None:
            self._options = SpiderOptions.from_settings(self.settings)
        return self._options

    @property
    def base_url(self) -> str:
        return (self.options.base_url or self.default_base_url).rstrip("/")

    @property
    def run_id(self) -> str:
        if self._run_id is None:
            self._run_id = self.options.run_id or generate_run_id()
        return self._run_id

    @property
    def page_size(self) -> int:
        return self.options.page_size or self.default_page_size

    @property
    def max_pages(self) -> int:
        return self.options.max_pages

    def url(self, path: str) -> str:
        return f"{self.base_url}/{path.lstrip('/')}"

    def provider_path(self, url: str) -> str:
        """The path at the provider (base URL prefix and query removed), for reports."""
        plain = url.split("?", 1)[0].split("#", 1)[0]
        if plain.startswith(self.base_url):
            rest = plain[len(self.base_url) :]
            return rest if rest.startswith("/") else "/" + rest
        return urlsplit(plain).path or "/"

    # -- requests and answers -----------------------------------------------

    def json_request(
        self,
        url: str,
        *,
        callback: Callable[..., Any],
        headers: Mapping[str, str] | None = None,
        json_body: Any = None,
        refusals: tuple[int, ...] = (),
        meta: Mapping[str, Any] | None = None,
        cb_kwargs: dict[str, Any] | None = None,
        errback: Callable[[Failure], Any] | None = None,
    ) -> scrapy.Request:
        """A request to a JSON API: a GET, or a POST of `json_body`; `refusals` are statuses
        that reach the callback as answers (a refused key, `KEY_REFUSED`). Never filtered as a
        duplicate: asking the same thing again (without a refused key) is deliberate."""
        sent = {"Content-Type": "application/json"} if json_body is not None else {}
        sent["Accept"] = "application/json"
        sent.update(headers or {})
        request_meta = {"handle_httpstatus_list": list(refusals)} if refusals else {}
        request_meta.update(meta or {})
        return scrapy.Request(
            url,
            method="GET" if json_body is None else "POST",
            body=None if json_body is None else json.dumps(json_body),
            headers=sent,
            meta=request_meta,
            callback=callback,
            errback=errback or self.on_request_failed,
            cb_kwargs=cb_kwargs,
            dont_filter=True,
        )

    def key_refused(
        self, response: Response, source: str, statuses: tuple[int, ...] = KEY_REFUSED
    ) -> bool:
        """True, with `auth: rejected` noted, when the answer is an HTTP refusal of the key."""
        if response.status not in statuses:
            return False
        self.note_auth("rejected", f"HTTP {response.status} from {source}")
        # What the refused page would have listed is unread, as for a page given up on (a
        # 401 on page 2 of a listing closed the offers of that page as "no longer listed").
        self.note_unread_of(getattr(response, "request", None))
        return True

    def json_page(
        self, response: Response, where: str, parse: Callable[[Any, ParseContext], Parsed]
    ) -> Parsed | None:
        """`parse` of the decoded JSON answer; None when the body is not JSON, which is noted
        as a layout error (the API answered, but not in its format)."""
        try:
            data = load_json(response.body)
        except ValueError:
            self.note_layout_error(f"{where}: answer is not JSON")
            return None
        return parse(data, self.context())

    def later_pages(self, count: int) -> range:
        """Pages 2..`count` of a listing whose first page says how many it has, at most
        GPURENT_MAX_PAGES (stopping short is noted as an error)."""
        if count > self.max_pages:
            self.note_page_cap()
        return range(2, min(count, self.max_pages) + 1)

    def page_limit_reached(self, page: int) -> bool:
        """True, and noted as an error, when `page` is the last GPURENT_MAX_PAGES allows."""
        if page < self.max_pages:
            return False
        self.note_page_cap()
        return True

    def note_page_cap(self) -> None:
        """The listing has pages beyond GPURENT_MAX_PAGES: the run is partial (rule 9), and
        what the pages left may list is unread."""
        self.ledger.page_cap_reached = self.max_pages
        self.ledger.add_error(f"stopped at GPURENT_MAX_PAGES={self.max_pages}")
        self.ledger.note_unread(prefixes=[EVERY_OFFER])

    # -- records -------------------------------------------------------------

    def observed_at(self) -> datetime:
        """UTC now: call once per response, so all its records share the instant."""
        return utcnow()

    def context(self) -> ParseContext:
        return ParseContext(provider=self.name, run_id=self.run_id, observed_at=self.observed_at())

    def offer(self, *, offer_key: str, raw: Any = None, **fields: Any) -> dict[str, Any]:
        """One offer feed line (a quarantine line if the contract refuses a field)."""
        return make_offer(self.context(), offer_key=offer_key, raw=raw, **fields).model_dump(
            mode="json"
        )

    def quarantine(
        self, reason: str, field: str | None, raw: Any, offer_key: str | None
    ) -> dict[str, Any]:
        record = make_quarantine(
            self.context(), reason=reason, field=field, raw=raw, offer_key=offer_key
        )
        return record.model_dump(mode="json")

    def emit(self, records: Iterable[Record]) -> Iterator[dict[str, Any] | RecordBatch]:
        """The records' feed lines: one item per record, or all of them as one
        `RecordBatch` when every feed of the crawl writes batches (`spiders.feed_batch`)."""
        listed = self.without_skips(records)
        if self.batch_feed:
            batch = RecordBatch(record.model_dump(mode="json") for record in listed)
            if batch:
                yield batch
            return
        for record in listed:
            yield record.model_dump(mode="json")

    def without_skips(self, records: Iterable[Record]) -> Iterator[Record]:
        """The records bound for the feed; skips are counted by kind in the run report."""
        for record in records:
            if isinstance(record, SkipRecord):
                self.ledger.skipped[record.skip_kind.value] += 1
            else:
                yield record

    @property
    def batch_feed(self) -> bool:
        """Whether this crawl hands its feed lines to Scrapy a page at a time (read once, when
        the crawl's settings are final)."""
        if self._batch_feed is None:
            settings = self.settings
            self._batch_feed = feeds_take_batches(
                settings.getdict("FEEDS"), settings.getwithbase("FEED_EXPORTERS")
            )
        return self._batch_feed

    def emit_page(self, page: PageResult, where: str) -> Iterator[dict[str, Any] | RecordBatch]:
        """Yield a parsed page's records and note how the page went."""
        for note in page.notes:
            self.note(note)
        for path in page.missing_fields:
            self.ledger.add_missing_field(f"{where}: {path}")
        self.ledger.note_unread(prefixes=page.unread_prefixes)
        self.ledger.note_sold_out_unlisted(page.sold_out_unlisted)
        if page.layout_error is not None:
            self.note_layout_error(f"{where}: {page.layout_error}")
        else:
            self.note_page_parsed()
        yield from self.emit(page.records)

    # -- run notes -----------------------------------------------------------

    def note_auth(self, state: AuthState, detail: str | None = None) -> None:
        """Declare how authentication went. Never pass a secret in `detail`."""
        self.ledger.set_auth(state, detail)
        if state in ("missing", "rejected"):
            logger.warning("%s: auth %s%s", self.name, state, f" ({detail})" if detail else "")

    def note(self, text: str) -> None:
        self.ledger.add_note(text)

    def note_layout_error(
        self, text: str, *, keys: Iterable[str] = (), prefixes: Iterable[str] | None = None
    ) -> None:
        """An answer that did not have its shape. What it would have listed is unread: the
        offers named by ``keys`` / ``prefixes`` when the spider knows them, else all."""
        logger.error("%s: layout error: %s", self.name, text)
        self.ledger.add_layout_error(text)
        self.note_unread(keys=keys, prefixes=prefixes)

    def note_unread(
        self, *, keys: Iterable[str] = (), prefixes: Iterable[str] | None = None
    ) -> None:
        """Offers this run could not read keep their last state, stale (rule of truth 10):
        those named by ``keys`` and ``prefixes``; with neither given, every offer."""
        keys = list(keys)
        if prefixes is None and not keys:
            prefixes = [EVERY_OFFER]
        self.ledger.note_unread(keys=keys, prefixes=prefixes or ())

    def note_unread_of(self, request: Any) -> None:
        """What ``request`` would have listed is unread: its ``UNREAD_META``, else every
        offer (a request that was not read cannot say what it would have held)."""
        unread = request.meta.get(UNREAD_META) if request is not None else None
        if isinstance(unread, dict):
            self.note_unread(keys=unread.get("keys", ()), prefixes=unread.get("prefixes"))
        else:
            self.note_unread()

    def note_page_parsed(self) -> None:
        self.ledger.pages_parsed += 1

    def note_api_error(
        self,
        where: str,
        error: str,
        *,
        keys: Iterable[str] = (),
        prefixes: Iterable[str] | None = None,
    ) -> None:
        """HTTP 200, but an error instead of data: a failed request, not a layout change.
        What it would have listed is unread (as in `note_layout_error`)."""
        self.ledger.requests_gave_up += 1
        self.ledger.add_error(f"api error on {where}: {error}")
        self.note_unread(keys=keys, prefixes=prefixes)

    def on_request_failed(self, failure: Failure) -> None:
        """Errback for every request: the request is given up (retries already spent), and
        what it would have listed is unread (its ``UNREAD_META``, else every offer)."""
        self.ledger.requests_gave_up += 1
        request = getattr(failure, "request", None)
        self.note_unread_of(request)
        where = self.provider_path(request.url) if request is not None else "?"
        if isinstance(failure.value, HttpError):
            status = failure.value.response.status
            logger.error("%s: gave up on %s after HTTP %s", self.name, where, status)
        else:
            # The ledger middleware already named the failure; keep the log short.
            logger.error("%s: gave up on %s: %s", self.name, where, type(failure.value).__name__)


class ApiSpider(ProviderSpider):
    """A provider spider that reads an API made for programs (JSON or GraphQL).

    robots.txt rules are for page crawlers, so such a spider does not ask for it; each
    subclass says in its docstring which API it calls and who else calls it that way.
    """

    custom_settings = {  # noqa: RUF012 (Scrapy reads it as a class attribute)
        "ROBOTSTXT_OBEY": False,
    }
