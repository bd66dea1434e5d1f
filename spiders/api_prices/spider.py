"""OpenRouter's public model list: the per-token price of every model it serves.

`GET {base}/models` (base `https://openrouter.ai/api/v1`; GPURENT_BASE_URL replaces it, as
for the provider spiders), no key: the documented "List all models" call
(https://openrouter.ai/docs/api/api-reference/models/get-models) that OpenRouter's own SDKs
and the model pickers of chat front ends make. One request, one answer; `parser.py` reads it.

One feed line per model with a readable price (`kind` "api_price"); the models skipped are
counted by reason in the run report's `skipped`, each named in its `notes`. A `data` list
renamed or removed is a layout error (nothing emitted); an empty list or an error body is a
failed request (`requests_gave_up`, nothing emitted): the caller (`gpurent api-prices
refresh`) keeps the list it had. It is no GPU provider: it is not in
``gpurent_core/providers.py`` and the crawl flows never run it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any, ClassVar

from scrapy.http import Response

from spiders.api_prices.parser import MODELS_PATH, ModelsPage, parse_models
from spiders.base import ApiSpider
from spiders.parsers.common import ParseContext


class OpenrouterPricesSpider(ApiSpider):
    """Reads OpenRouter's public model list, as its own SDKs do (a JSON API: no robots.txt)."""

    name = "openrouter_prices"
    default_base_url: ClassVar[str] = "https://openrouter.ai/api/v1"

    async def start(self) -> AsyncIterator[Any]:
        yield self.json_request(self.url(MODELS_PATH), callback=self.parse_models)

    def parse_models(self, response: Response) -> Iterator[dict[str, Any]]:
        where = MODELS_PATH
        page = self.json_page(response, where, _parse)
        if page is None:
            return  # not JSON: noted as a layout error
        for path in page.missing_fields:
            self.ledger.add_missing_field(f"{where}: {path}")
        for reason, count in page.skipped.items():
            self.ledger.skipped[reason] += count
        for note in page.notes:
            self.note(note)
        if page.layout_error is not None:
            self.note_layout_error(f"{where}: {page.layout_error}")
            return
        if page.failed_read is not None:
            self.note_api_error(where, page.failed_read)
            return
        self.note_page_parsed()
        observed_at = self.observed_at()
        for price in page.prices:
            yield price.feed_line(run_id=self.run_id, observed_at=observed_at, source=response.url)


def _parse(data: Any, ctx: ParseContext) -> ModelsPage:
    return parse_models(data)
