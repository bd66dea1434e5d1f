"""Per-token API prices for open models: ``api_prices`` (list them) and
``refresh_api_prices`` (read OpenRouter's public model list again).

Two sources, as ``sizing.api_prices`` reads them: the table shipped with gpurent (prices read
from providers' pages, each dated and sourced) and the refreshed list beside the warehouse
(``api_prices.json``), written here from OpenRouter's list. Every price carries the day it
was read (``as_of``) and where; one read longer ago than ``OLD_AFTER_DAYS`` is flagged
``old``: API prices move within months.

The refresh runs the ``openrouter_prices`` spider in a process of its own (as the crawl flow
runs a provider's, ``flows.crawl.run_crawl``) and places each model in gpurent's catalog by
its Hugging Face id, or by its OpenRouter id (variant suffix such as ``:free`` aside) when it
has none. A name that only reaches *another* catalog model (an alias: Llama 3 8B is not
Llama 3.1 8B) is not a match, nor is a name the catalog does not hold: such models are
counted, never written. A crawl that read no list (no answer, an error, an empty list, a
changed layout) raises ``RefreshFailed`` and leaves the list that was there as it was.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from gpurent.api.errors import ApiPricesUnreadable, RefreshFailed, UnknownName
from gpurent.api.warehouse import refuse_directory, resolve_db
from sizing.api_prices import (
    OLD_AFTER_DAYS,
    ApiPrice,
    ApiPriceError,
    Relation,
    matching_prices,
    read_refreshed,
    refreshed_path,
    shipped_prices,
    write_refreshed,
)

SPIDER = "openrouter_prices"
"""The Scrapy spider that reads OpenRouter's list (spiders/api_prices/)."""
PROVIDER = "openrouter"
"""The provider the refreshed prices are written under."""
FEED_KIND = "api_price"
"""The spider's feed lines' `kind`."""
SHIPPED = "shipped"
REFRESHED = "refreshed"

# Why a model OpenRouter priced is not written.
NOT_IN_CATALOG = "not_in_catalog"
ANOTHER_MODEL = "another_model"

FREE_VARIANT = "free_variant"
"""Why a ``:free`` variant is not written: a trial tier under account-wide rate limits
(requests per minute and per day), not a price a workload can be served at; the paid route
of the same model is written."""
CONDITIONAL_NOTE = (
    "OpenRouter lists other prices for some requests (long prompts); this is the default one"
)


@dataclass(frozen=True)
class ListedPrice:
    """One API price as listed: the price, where it comes from, how old it is."""

    price: ApiPrice
    origin: str
    """``shipped`` (the table shipped with gpurent) or ``refreshed`` (the list beside the
    warehouse, from `gpurent api-prices refresh`)."""
    age_days: int
    """Days since ``price.as_of``, counted to today (UTC)."""
    old: bool
    """Read more than ``OLD_AFTER_DAYS`` ago: check the source before relying on it."""
    relation: Relation | None = None
    """How the API's model stands to the model asked for (None when none was asked)."""

    def as_row(self) -> dict[str, Any]:
        p = self.price
        return {
            "provider": p.provider,
            "api_model": p.api_model,
            "model": p.model,
            "relation": None if self.relation is None else self.relation.value,
            "input_per_million": p.input_per_million,
            "output_per_million": p.output_per_million,
            "currency": p.currency,
            "served_as": p.served_as,
            "as_of": p.as_of,
            "age_days": self.age_days,
            "old": self.old,
            "origin": self.origin,
            "source": p.source,
            "note": p.note,
        }


@dataclass(frozen=True)
class UnmatchedModel:
    """A model OpenRouter priced that was not written: no catalog model is the one it serves."""

    api_model: str
    name_tried: str
    reason: str
    """``not_in_catalog`` (the catalog holds no such model) or ``another_model`` (the name
    reaches a catalog model only through an alias naming another one)."""
    catalog_model: str | None = None
    """The other model the name reached (``another_model``)."""


@dataclass(frozen=True)
class RefreshAnswer:
    """What one refresh read and wrote."""

    path: Path
    """The refreshed list written (beside the warehouse)."""
    source: str
    """The address the list was read from."""
    fetched_at: datetime
    """When the answer was read (UTC); the prices' ``as_of`` is its date."""
    written: tuple[ApiPrice, ...]
    models_read: int
    """Models with a readable price in the list (written or not)."""
    skipped: dict[str, int]
    """Models without a price taken, by reason (``variable_price``: a router priced "-1";
    ``unreadable_price``; ``request_fee``; ``free_variant``: a rate-limited trial tier...)."""
    unmatched: tuple[UnmatchedModel, ...]

    @property
    def unmatched_counts(self) -> dict[str, int]:
        return dict(sorted(Counter(u.reason for u in self.unmatched).items()))


# -- the list ---------------------------------------------------------------------------


def api_prices(
    model: str | None = None, db: Path | str | None = None, *, today: date | None = None
) -> list[ListedPrice]:
    """The shipped and refreshed API prices; with ``model``, only those serving it or a
    model of its very architecture (``relation`` says which), the newest reading per API.

    ``db``: the warehouse whose refreshed list to add (a path, else ``GPURENT_DB``, else the
    default; none there: the shipped table alone). ``UnknownName`` for a model the catalog
    does not hold; ``ApiPricesUnreadable`` for a refreshed list that cannot be read."""
    refreshed = _read_refreshed(_db_path(db))
    origin = {id(p): SHIPPED for p in shipped_prices()} | {id(p): REFRESHED for p in refreshed}
    prices = [*shipped_prices(), *refreshed]
    day = today or datetime.now(UTC).date()
    if model is None:
        listed = [_listed(p, origin[id(p)], day) for p in prices]
        return sorted(listed, key=lambda r: (r.price.model, r.price.provider, r.price.currency))
    arch = _arch(model)
    matched = matching_prices(arch, prices)
    listed = [_listed(m.price, origin[id(m.price)], day, m.relation) for m in matched]
    order = {Relation.SAME: 0, Relation.EQUIVALENT: 1}
    return sorted(
        listed,
        key=lambda r: (order[r.relation] if r.relation else 2, r.price.provider, r.price.currency),
    )


def _listed(
    price: ApiPrice, origin: str, today: date, relation: Relation | None = None
) -> ListedPrice:
    age = price.age_days(today)
    return ListedPrice(price, origin, age, age > OLD_AFTER_DAYS, relation)


def _arch(model: str) -> Any:
    from sizing.models import UnknownModel, get_entry

    try:
        return get_entry(model).arch
    except UnknownModel as exc:
        raise UnknownName(str(exc.args[0]), argument="model") from exc


def _db_path(db: Path | str | None) -> Path:
    path = resolve_db(db)
    refuse_directory(path)
    return path


def _read_refreshed(db: Path) -> tuple[ApiPrice, ...]:
    path = refreshed_path(db)
    try:
        return read_refreshed(path)
    except ApiPriceError as exc:
        raise ApiPricesUnreadable(
            f"{exc}; run `gpurent api-prices refresh` again or remove {path}", argument="db"
        ) from exc


# -- the refresh ------------------------------------------------------------------------


def refresh_api_prices(
    db: Path | str | None = None, *, base_url: str | None = None, replay: bool = False
) -> RefreshAnswer:
    """Read OpenRouter's model list and write the prices of the catalog's models beside the
    warehouse ``db`` (``api_prices.json``), replacing the list there.

    ``base_url``: another address for OpenRouter's API (the replay server in tests).
    ``replay``: read the bundled recording of the list instead, from a local replay server
    (offline, as `gpurent crawl --replay`; its values are invented, its source says so).
    ``RefreshFailed`` (the old list kept as it was) when the list could not be read."""
    path = refreshed_path(_db_path(db))
    if replay:
        with _replayed_list() as local:
            lines, skipped = _crawl(local)
    else:
        lines, skipped = _crawl(base_url)
    first = lines[0]
    fetched_at = _utc(first.get("observed_at"))
    source = str(first.get("source") or "")
    written: list[ApiPrice] = []
    unmatched: list[UnmatchedModel] = []
    for line in lines:
        if line.get("variant") == "free":
            skipped[FREE_VARIANT] = skipped.get(FREE_VARIANT, 0) + 1
            continue
        price, miss = _priced(line, fetched_at.date(), source)
        if price is not None:
            written.append(price)
        elif miss is not None:
            unmatched.append(miss)
    written.sort(key=lambda p: (p.model, p.api_model))
    write_refreshed(path, written, fetched_at)
    return RefreshAnswer(
        path=path,
        source=source,
        fetched_at=fetched_at,
        written=tuple(written),
        models_read=len(lines),
        skipped=skipped,
        unmatched=tuple(unmatched),
    )


def catalog_match(
    hugging_face_id: str | None, api_model: str
) -> tuple[str | None, UnmatchedModel | None]:
    """The catalog model OpenRouter's model serves, or why there is none.

    The Hugging Face id names the weights served, so it decides when OpenRouter gives one;
    the OpenRouter id (its variant such as ``:free`` aside) only when it gives none. A name
    found only through an alias naming another model (``another_model``) is no match."""
    from sizing.models import another_model, find_model

    name = hugging_face_id or api_model.split(":", 1)[0]
    entry = find_model(name)
    if entry is None:
        return None, UnmatchedModel(api_model, name, NOT_IN_CATALOG)
    if another_model(name, entry):
        return None, UnmatchedModel(api_model, name, ANOTHER_MODEL, entry.name)
    return entry.name, None


def _priced(
    line: dict[str, Any], as_of: date, source: str
) -> tuple[ApiPrice | None, UnmatchedModel | None]:
    api_model = str(line["api_model"])
    hf_id = line.get("hugging_face_id")
    model, miss = catalog_match(hf_id if isinstance(hf_id, str) else None, api_model)
    if model is None:
        return None, miss
    notes = []
    if line.get("conditional_prices"):
        notes.append(CONDITIONAL_NOTE)
    return (
        ApiPrice(
            provider=PROVIDER,
            api_model=api_model,
            model=model,
            input_per_million=_money(line["input_per_million"]),
            output_per_million=_money(line["output_per_million"]),
            currency=str(line["currency"]),
            as_of=as_of,
            source=source,
            note="; ".join(notes) or None,
        ),
        None,
    )


def _money(text: Any) -> Decimal:
    try:
        return Decimal(str(text))
    except InvalidOperation as exc:  # the spider writes only decimals: a bug, said plainly
        raise RefreshFailed(f"the crawl wrote a price that is no number: {text!r}") from exc


def _utc(text: Any) -> datetime:
    try:
        when = datetime.fromisoformat(str(text))
    except ValueError as exc:
        raise RefreshFailed(f"the crawl wrote no readable time: {text!r}") from exc
    if when.tzinfo is None:
        raise RefreshFailed(f"the crawl wrote a time without a zone: {text!r}")
    return when.astimezone(UTC)


REPLAY_SEGMENT = "openrouter"
"""The replay server's provider segment the bundled list is served under."""


@contextmanager
def _replayed_list() -> Iterator[str]:
    """A replay server answering the bundled recording of OpenRouter's list (the spider's
    own ``recordings/``, a one-step scene of its own); its base URL while it runs."""
    from gpurent_core.providers import providers_root
    from replay import ReplayServer

    # spiders/api_prices/recordings, found by path beside the providers' folders (the
    # spiders package is not imported: the library API sits above it only through flows).
    recordings = providers_root().parent / "api_prices" / "recordings"
    with tempfile.TemporaryDirectory(prefix="gpurent-api-prices-replay-") as tmp:
        scene = Path(tmp) / "default"
        shutil.copytree(recordings, scene / REPLAY_SEGMENT)
        (scene / "scene.json").write_text(json.dumps({"steps": 1}), encoding="utf-8")
        with ReplayServer(root=Path(tmp)) as server:
            yield server.base_url(REPLAY_SEGMENT)


def _crawl(base_url: str | None) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Run the spider; its price lines and its skipped counts, or `RefreshFailed`."""
    if importlib.util.find_spec("scrapy") is None:
        # Said by the command line as the part to install (gpurent[crawl]), before any work.
        raise ModuleNotFoundError("No module named 'scrapy'", name="scrapy")
    from flows.crawl import CrawlSpec, run_crawl
    from gpurent_core.model import utcnow

    run_id = f"api-prices-{utcnow():%Y%m%dT%H%M%SZ}"
    with tempfile.TemporaryDirectory(prefix="gpurent-api-prices-") as work:
        spec = CrawlSpec(provider=SPIDER, run_id=run_id, work_dir=Path(work), base_url=base_url)
        outcome = run_crawl(spec)
        report = outcome.report()
        lines = _feed_lines(outcome.feed_path)
        problem = crawl_problem(outcome.returncode, report, lines)
        if problem is None and report is not None:
            skipped = {str(k): int(v) for k, v in (report.get("skipped") or {}).items()}
            return lines, skipped
        # Without a report, what the process said last (an import error, a bad setting).
        tail = _last_line(outcome.log_path.with_suffix(".stderr")) if report is None else ""
    raise RefreshFailed(
        f"OpenRouter's model list was not read ({problem}{': ' + tail if tail else ''}); "
        "the refreshed API price list is kept as it was"
    )


def crawl_problem(
    returncode: int | None, report: dict[str, Any] | None, lines: list[dict[str, Any]]
) -> str | None:
    """Why a crawl of the list read nothing to write, in a few words; None when it read it."""
    if returncode is None:
        return "the crawl did not finish in time"
    if report is None:
        return f"the crawler stopped (exit status {returncode}) before its run report"
    if report.get("layout_errors"):
        return f"the answer's layout changed: {report['layout_errors'][0]}"
    if report.get("parse_errors"):
        return "the answer could not be parsed"
    if report.get("requests_gave_up") or not report.get("pages_parsed"):
        errors = report.get("errors") or ["no answer"]
        return f"the request failed: {errors[-1]}"
    if returncode != 0:
        return f"the crawler exited with status {returncode}"
    if not lines:
        return "no price in the answer"
    return None


def _feed_lines(feed: Path) -> list[dict[str, Any]]:
    if not feed.is_file():
        return []
    found = []
    for text in feed.read_text(encoding="utf-8").splitlines():
        if not text.strip():
            continue
        line = json.loads(text)
        if isinstance(line, dict) and line.get("kind") == FEED_KIND:
            found.append(line)
    return found


def _last_line(path: Path) -> str:
    try:
        lines = [t.strip() for t in path.read_text(encoding="utf-8").splitlines() if t.strip()]
    except OSError:
        return ""
    return lines[-1][:200] if lines else ""
