"""The spider of an API whose listing is a GET behind a key: one answer, or pages of one.

Eleven providers publish this way (Chenyu, DigitalOcean, Featurize, GpuEZ, JarvisLabs,
Lambda, Novita, Paperspace, PPIO, Prime Intellect, Shadeform): a key from the environment,
a GET of the listing (page 1, then the pages it calls for), answers that hold the offers.
What they share is the order of the checks, so every one of them keeps the same promises:

- no key set: nothing is asked and the run says `auth: missing` (it ends `auth_required`,
  never sold out);
- HTTP 401/403, or an answer whose envelope refuses the key (`ApiPage.auth_rejected`):
  `auth: rejected`, no rows, and what the answer would have listed is unread (on a later
  page too: the offers seen so far stay, the rest are not gone);
- an answer that is not JSON: a layout error; an API error in a 200 answer: a failed request;
  what it would have listed is unread either way, kept with its age (rule of truth 10);
- otherwise `auth: ok`, the page's records, and the next pages (`later_requests`).

The key is read from the provider's one variable (`auth_env`, from its line in
`gpurent_core.providers`), sent in one header (`key_headers`) and never logged, stored in
settings or written anywhere. A subclass names the spider, `list_path` (with `list_query`,
or `page_query` for a paged listing) and `parse_list`, the pure function of its folder's
parser.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any, ClassVar

import scrapy
from scrapy.http import Response

from spiders.base import KEY_REFUSED, ApiSpider, env_secret
from spiders.parsers.common import PageResult, ParseContext
from spiders.parsers.envelope import ApiPage


class KeyedListSpider(ApiSpider):
    """A keyed GET of `list_path` (page by page when `paged`), read by `parse_list`."""

    needs_auth = True
    list_path: ClassVar[str]
    list_query: ClassVar[str] = ""
    """Appended to the URL as it is (``"?includePublicClusters=true"``)."""
    paged: ClassVar[bool] = False
    """True: page N is asked with `page_query(N)`, and each page says what follows it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._key: str | None = None

    def key_headers(self, key: str) -> dict[str, str]:
        """The header that carries the key; a bearer token unless the API says otherwise."""
        return {"Authorization": f"Bearer {key}"}

    def page_query(self, page: int) -> str:
        """The query string of page `page`, "?" included (`list_query` when not paged)."""
        return self.list_query

    def parse_list(self, data: Any, ctx: ParseContext) -> PageResult:
        raise NotImplementedError

    def later_requests(self, page: int, result: Any) -> Iterator[scrapy.Request]:
        """What page `page`, read as `result`, calls for next (nothing: the listing is
        whole). A paged listing yields `list_request(page + 1)` or the pages it counts."""
        return iter(())

    async def start(self) -> AsyncIterator[Any]:
        (key_env,) = self.auth_env
        self._key = env_secret(key_env)
        if self._key is None:
            self.note_auth(
                "missing", f"{key_env} not set: {self.name} publishes nothing without it"
            )
            return
        yield self.list_request(1)

    def list_request(self, page: int) -> scrapy.Request:
        assert self._key is not None
        return self.json_request(
            self.url(self.list_path) + self.page_query(page),
            headers=self.key_headers(self._key),
            refusals=KEY_REFUSED,
            callback=self.parse_answer,
            cb_kwargs={"page": page},
        )

    def where(self, page: int) -> str:
        return f"{self.list_path} page {page}" if self.paged else self.list_path

    def parse_answer(self, response: Response, page: int = 1) -> Iterator[Any]:
        where = self.where(page)
        if self.key_refused(response, where):
            self.note_unread()
            return
        result = self.json_page(response, where, self.parse_list)
        if result is None:
            return
        if isinstance(result, ApiPage):
            if result.auth_rejected:
                self.note_auth("rejected", f"the API refused the key in its answer to {where}")
                self.note_unread()
                return
            if result.api_error is not None:
                self.note_api_error(where, result.api_error)
                return
        self.note_auth("ok")
        yield from self.emit_page(result, where)
        yield from self.later_requests(page, result)
