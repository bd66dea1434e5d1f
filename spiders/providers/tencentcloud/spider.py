"""腾讯云 Tencent Cloud CVM: GPU instance types per zone, their sale state and hourly price.

With `TENCENTCLOUD_SECRET_ID` and `TENCENTCLOUD_SECRET_KEY` in the environment (the names
Tencent's own SDKs and CLI read), one signed call per region (`DEFAULT_REGIONS`, or the
spider argument ``-a regions=ap-guangzhou,ap-chengdu``): `POST {base}/` with the JSON body
`request_body()` (pay-as-you-go types of the GPU families in `families.FAMILY_CARDS`) and
the API 3.0 headers `X-TC-Action: DescribeZoneInstanceConfigInfos`, `X-TC-Version:
2017-03-12`, `X-TC-Region`, `X-TC-Timestamp` and a TC3-HMAC-SHA256 `Authorization`
(`tc3.py`), the documented CVM action (cloud.tencent.com/document/api/213/33254).

What a failure leaves unread (rule of truth 10) is that region's offers, prefix
`<region>-` (its zones): a request that fails, an answer that is not JSON or lost its
layout, an API error. The other regions are read and closed as usual.

Every call is signed, so without both keys nothing is public: the run reports `auth:
missing` and asks nothing. An `Error.Code` starting AuthFailure (a wrong, unknown or expired
key) or UnauthorizedOperation (a key not allowed to read CVM), or HTTP 401/403, reports
`auth: rejected`. The secret key only signs: it is never sent, logged, stored in settings or
written to the feed or the run report.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import urlsplit

import scrapy
from scrapy.http import Response

from gpurent_core.providers import provider
from spiders.base import KEY_REFUSED, UNREAD_META, ApiSpider, env_secret
from spiders.feed_batch import RecordBatch
from spiders.parsers.common import load_json
from spiders.providers.tencentcloud.parser import (
    ACTION,
    DEFAULT_REGIONS,
    SERVICE,
    VERSION,
    ZoneConfigPage,
    parse_zone_configs,
    region_prefix,
    request_body,
)
from spiders.providers.tencentcloud.tc3 import signed_headers

API_PATH = "/"
# The credentials it reads, from its line in gpurent_core.providers (the tests set them).
SECRET_ID_ENV, SECRET_KEY_ENV = provider("tencentcloud").auth_env


class TencentcloudSpider(ApiSpider):
    """Reads Tencent Cloud API 3.0 (CVM), signed as Tencent's SDKs sign it."""

    name = "tencentcloud"
    needs_auth = True

    def __init__(self, *args: Any, regions: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        asked = [r.strip() for r in (regions or "").split(",") if r.strip()]
        self.regions: tuple[str, ...] = tuple(asked) or DEFAULT_REGIONS
        secret_id, secret_key = env_secret(SECRET_ID_ENV), env_secret(SECRET_KEY_ENV)
        keys = (secret_id, secret_key) if secret_id and secret_key else None
        self._secret_id = keys[0] if keys else None
        self._secret_key = keys[1] if keys else None

    async def start(self) -> AsyncIterator[Any]:
        if self._secret_id is None:
            detail = f"{SECRET_ID_ENV} / {SECRET_KEY_ENV} not set: every call is signed"
            self.note_auth("missing", detail)
            return
        for region in self.regions:
            yield self.region_request(region)

    def region_request(self, region: str) -> scrapy.Request:
        """The signed call of one region; its failure leaves that region's offers unread."""
        assert self._secret_id is not None and self._secret_key is not None
        url = self.url(API_PATH)
        # Signed and sent as the same bytes: nothing may re-encode the body after signing.
        payload = json.dumps(request_body(), separators=(",", ":")).encode("utf-8")
        headers = signed_headers(
            secret_id=self._secret_id,
            secret_key=self._secret_key,
            service=SERVICE,
            host=urlsplit(url).netloc,
            action=ACTION,
            version=VERSION,
            region=region,
            payload=payload,
            timestamp=int(time.time()),
        )
        return scrapy.Request(
            url,
            method="POST",
            body=payload,
            headers={**headers, "Accept": "application/json"},
            meta={
                "handle_httpstatus_list": list(KEY_REFUSED),
                UNREAD_META: {"prefixes": [region_prefix(region)]},
            },
            callback=self.parse_region,
            errback=self.on_request_failed,
            cb_kwargs={"region": region},
            dont_filter=True,
        )

    def parse_region(self, response: Response, region: str) -> Iterator[Any]:
        where = f"{ACTION} {region}"
        prefixes = [region_prefix(region)]
        if response.status in KEY_REFUSED:
            self.note_auth("rejected", f"HTTP {response.status} from {where}")
            self.note_unread(prefixes=prefixes)
            return
        try:
            data = load_json(response.body)
        except ValueError:
            self.note_layout_error(f"{where}: answer is not JSON", prefixes=prefixes)
            return
        page = parse_zone_configs(data, self.context(), region=region)
        if page.auth_rejected:
            self.note_auth("rejected", f"{page.error_code} from {where}")
            self.note_unread(prefixes=prefixes)
            return
        if page.api_error is not None:
            self.note_api_error(where, page.api_error, prefixes=prefixes)
            return
        self.note_auth("ok")
        yield from self.emit_region(page, where, prefixes)

    def emit_region(
        self, page: ZoneConfigPage, where: str, prefixes: list[str]
    ) -> Iterator[dict[str, Any] | RecordBatch]:
        """`emit_page` for one region's answer: a layout error there leaves that region's
        offers unread, not every region's (the base class cannot know the prefix)."""
        if page.layout_error is None:
            yield from self.emit_page(page, where)
            return
        for note in page.notes:
            self.note(note)
        for path in page.missing_fields:
            self.ledger.add_missing_field(f"{where}: {path}")
        self.note_layout_error(f"{where}: {page.layout_error}", prefixes=prefixes)
        yield from self.emit(page.records)
