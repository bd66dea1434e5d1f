"""The spider of an API whose whole listing is one GET behind a key.

Eight providers publish this way (Chenyu, Featurize, JarvisLabs, Lambda, Novita, Paperspace,
PPIO, Shadeform): a key from the environment, one request, one answer that holds every offer.
What they share is the order of the checks, so every one of them keeps the same promises:

- no key set: nothing is asked and the run says `auth: missing` (it ends `auth_required`,
  never sold out);
- HTTP 401/403, or an answer whose envelope refuses the key (`ApiPage.auth_rejected`):
  `auth: rejected`, no rows;
- an answer that is not JSON: a layout error; an API error in a 200 answer: a failed request;
  what it would have listed is unread either way, kept with its age (rule of truth 10);
- otherwise `auth: ok` and the page's records.

The key is read from the provider's one variable (`auth_env`, from its line in
`gpurent_core.providers`), sent in
one header (`key_headers`) and never logged, stored in settings or written anywhere.
A subclass names the spider, `list_path` (with `list_query`) and `parse_list`, the pure
function of its folder's parser.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any, ClassVar

from scrapy.http import Response

from spiders.base import KEY_REFUSED, ApiSpider, env_secret
from spiders.parsers.common import PageResult, ParseContext
from spiders.parsers.envelope import ApiPage


class KeyedListSpider(ApiSpider):
    """One keyed GET of `list_path`, read by `parse_list`."""

    needs_auth = True
    list_path: ClassVar[str]
    list_query: ClassVar[str] = ""
    """Appended to the URL as it is (``"?includePublicClusters=true"``)."""

    def key_headers(self, key: str) -> dict[str, str]:
        """The header that carries the key; a bearer token unless the API says otherwise."""
        return {"Authorization": f"Bearer {key}"}

    def parse_list(self, data: Any, ctx: ParseContext) -> PageResult:
        raise NotImplementedError

    async def start(self) -> AsyncIterator[Any]:
        (key_env,) = self.auth_env
        key = env_secret(key_env)
        if key is None:
            self.note_auth(
                "missing", f"{key_env} not set: {self.name} publishes nothing without it"
            )
            return
        yield self.json_request(
            self.url(self.list_path) + self.list_query,
            headers=self.key_headers(key),
            refusals=KEY_REFUSED,
            callback=self.parse_answer,
        )

    def parse_answer(self, response: Response) -> Iterator[Any]:
        where = self.list_path
        if self.key_refused(response, where):
            return
        page = self.json_page(response, where, self.parse_list)
        if page is None:
            return
        if isinstance(page, ApiPage):
            if page.auth_rejected:
                self.note_auth("rejected", f"the API refused the key in its answer to {where}")
                return
            if page.api_error is not None:
                self.note_api_error(where, page.api_error)
                return
        self.note_auth("ok")
        yield from self.emit_page(page, where)
