"""The spider side of the signed UCloud API that UCloud UHost and 优云智算 Compshare share:
keys from the environment, one signed POST per call, refusals and layout errors noted
against the offers each call decides. Each provider's spider says which actions it calls."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import scrapy
from scrapy.http import Response

from gpurent_core.providers import provider
from spiders.base import KEY_REFUSED, UNREAD_META, ApiSpider, env_secret
from spiders.feed_batch import RecordBatch
from spiders.parsers.common import PageResult, load_json
from spiders.parsers.ucloud import ParamValue, signed_params

API_PATH = "/"


class UCloudApiSpider(ApiSpider):
    """A spider of a signed UCloud API; ``default_region`` is the provider's."""

    needs_auth = True
    default_region = ""

    def __init__(self, *args: Any, region: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.region = region or self.default_region
        # The credentials it reads, from its line in gpurent_core.providers.
        self.key_envs: tuple[str, ...] = provider(self.name).auth_env
        public, private = (env_secret(name) for name in self.key_envs)
        keys = (public, private) if public and private else None
        self._public_key = keys[0] if keys else None
        self._private_key = keys[1] if keys else None
        self._rejected = False

    def keys_missing(self) -> bool:
        """Whether the keys are missing (then noted: every call is signed, nothing is public)."""
        if self._public_key is not None:
            return False
        self.note_auth("missing", " / ".join(self.key_envs) + " not set: every call is signed")
        return True

    # -- requests ----------------------------------------------------------------

    def api_request(
        self,
        params: Mapping[str, ParamValue],
        *,
        callback: Any,
        where: str,
        decides: list[str] | None = None,
        cb_kwargs: dict[str, Any] | None = None,
        errback: Any = None,
    ) -> scrapy.Request:
        """A signed call; `decides`: the offer keys its answer decides (what its failure
        leaves unread), None for every offer."""
        assert self._public_key is not None and self._private_key is not None
        body = signed_params(params, public_key=self._public_key, private_key=self._private_key)
        meta: dict[str, Any] = {
            "handle_httpstatus_list": list(KEY_REFUSED),
            "gpurent_where": f"{params['Action']} ({where})",
        }
        if decides is not None:
            meta[UNREAD_META] = {"keys": list(decides)}
        return scrapy.Request(
            self.url(API_PATH),
            method="POST",
            body=json.dumps(body, ensure_ascii=False),
            headers={"Content-Type": "application/json", "Accept": "application/json"},
            meta=meta,
            callback=callback,
            errback=errback or self.on_request_failed,
            cb_kwargs=cb_kwargs or {},
            dont_filter=True,
        )

    @staticmethod
    def decided(response: Response) -> list[str]:
        """The offer keys the request of `response` decides; [] for every offer."""
        unread = response.meta.get(UNREAD_META)
        return list(unread["keys"]) if isinstance(unread, dict) else []

    def read(self, response: Response) -> Any | None:
        """The decoded answer, or None when it is a refusal or not JSON (already noted)."""
        where = response.meta.get("gpurent_where", API_PATH)
        if response.status in KEY_REFUSED:
            self.rejected(f"HTTP {response.status} from {where}")
            return None
        try:
            return load_json(response.body)
        except ValueError:
            self.note_layout_error(f"{where}: answer is not JSON", keys=self.decided(response))
            return None

    def emit_answer(
        self, page: PageResult, where: str, response: Response
    ) -> Iterator[dict[str, Any] | RecordBatch]:
        """`emit_page` for an answer that decides only some offers: a layout error there
        leaves those offers unread, not every offer (the base class cannot know them)."""
        keys = self.decided(response)
        if page.layout_error is None or not keys:
            yield from self.emit_page(page, where)
            return
        for note in page.notes:
            self.note(note)
        for path in page.missing_fields:
            self.ledger.add_missing_field(f"{where}: {path}")
        self.note_layout_error(f"{where}: {page.layout_error}", keys=keys)
        yield from self.emit(page.records)

    def rejected(self, detail: str) -> None:
        self._rejected = True
        self.note_auth("rejected", detail)
