"""How each provider's parser is called on a fixture case, and what its `output.json` holds.

`PARSERS[provider]` is a `CaseParser`: `parse(case)` turns the case's input files into a page
(the fixture test, the mutation tests and the provider tests all call it), `check(page, case)`
asserts the page is what the case folder says (by default `assert_matches_case`: records as
feed lines, page facts from `page.json`). A new provider adds one entry here.

Case folders may carry arguments next to the input:

* compshare `case.json`: `{"kind": "types" | "inventory" | "inventory_map" | "price", ...}`
  (zone, charge_type); `output.json` is the summary `compshare_summary()` writes;
* hyperstack: a case named `*pricebook*` is the price book (`output.json`: its prices), any
  other is a flavors answer joined with the recorded price book;
* runpod `args.json`: `{"cloud": "secure" | "community", "catalog": null}`; without `cloud`
  the input is the catalog answer, `catalog: null` prices against an empty catalog;
* verda `args.json`: `source` (`instance_types`, `on_demand`, `spot`, `locations`,
  `volume_types`, `token`); an `instance_types` case builds offers with the other answers
  from the recordings unless `args.json` names another file (`recording:` / `fixture:`) or
  null (that answer missing);
* ucloud `case.json`: `{"kind": "types" | "price", "charge_type": ...}`; `output.json` is
  the summary `ucloud_summary()` writes;
* xiangongyun `robots.txt` cases: `output.json` is `{"allowed": {path: bool}}`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from typing import Any

from protego import Protego
from spider_fixture_cases import (
    OBSERVED_AT,
    RUN_ID,
    Case,
    assert_matches_case,
    recordings_of,
    resolve_ref,
    strip_volatile,
)

from gpurent_core.model import parse_parser_record
from spiders.parsers.common import PageResult, ParseContext, feed_dicts, load_json
from spiders.providers.autodl import parser as autodl
from spiders.providers.azure import parser as azure
from spiders.providers.chenyu import parser as chenyu
from spiders.providers.cloudrift import parser as cloudrift
from spiders.providers.compshare import parser as compshare
from spiders.providers.cudo import parser as cudo
from spiders.providers.digitalocean import parser as digitalocean
from spiders.providers.featurize import parser as featurize
from spiders.providers.gongji import parser as gongji
from spiders.providers.gpuez import parser as gpuez
from spiders.providers.gpushare import parser as gpushare
from spiders.providers.hyperstack import parser as hyperstack
from spiders.providers.jarvislabs import parser as jarvislabs
from spiders.providers.lambdalabs import parser as lambdalabs
from spiders.providers.lanyun import parser as lanyun
from spiders.providers.matpool import parser as matpool
from spiders.providers.novita import parser as novita
from spiders.providers.paperspace import parser as paperspace
from spiders.providers.ppio import parser as ppio
from spiders.providers.primeintellect import parser as primeintellect
from spiders.providers.runpod import parser as runpod
from spiders.providers.shadeform import parser as shadeform
from spiders.providers.suanjia import parser as suanjia
from spiders.providers.tencentcloud import parser as tencentcloud
from spiders.providers.tensordock import parser as tensordock
from spiders.providers.ucloud import parser as ucloud
from spiders.providers.vastai import parser as vastai
from spiders.providers.verda import parser as verda
from spiders.providers.vultr import parser as vultr
from spiders.providers.xiangongyun import parser as xiangongyun
from spiders.settings import USER_AGENT


@dataclass(frozen=True)
class CaseParser:
    parse: Callable[[Case], Any]
    check: Callable[[Any, Case], None] = assert_matches_case


def ctx(provider: str) -> ParseContext:
    return ParseContext(provider, RUN_ID, OBSERVED_AT)


def json_input(parser: Callable[[Any, ParseContext], Any], provider: str) -> CaseParser:
    """A parser of one decoded JSON answer and the run's context."""
    return CaseParser(lambda case: parser(load_json(case.input_bytes()), ctx(provider)))


def text_input(parser: Callable[[str, ParseContext], Any], provider: str) -> CaseParser:
    """A parser of one page's text and the run's context."""
    return CaseParser(lambda case: parser(case.input_bytes().decode("utf-8"), ctx(provider)))


def parse(case: Case) -> Any:
    """The page of one case, as its provider's entry parses it."""
    return PARSERS[case.provider].parse(case)


def check(case: Case) -> None:
    """The case's input parses to what its folder says."""
    entry = PARSERS[case.provider]
    entry.check(entry.parse(case), case)


def load_ref(ref: str) -> Any:
    """`recording:` / `fixture:<provider>/<file>`, decoded."""
    return load_json(resolve_ref(ref).read_bytes())


def case_args(case: Case, name: str = "args.json") -> dict[str, Any]:
    path = case.folder / name
    return dict(json.loads(path.read_text(encoding="utf-8"))) if path.is_file() else {}


# -- autodl: the machine list (JSON) or the rendered home page (HTML) ----------------------


def _autodl(case: Case) -> PageResult:
    if case.is_html:
        return autodl.parse_home(case.input_bytes().decode("utf-8"), ctx("autodl"))
    return autodl.parse_machine_list(load_json(case.input_bytes()), ctx("autodl"))


# -- compshare: three actions, compared as page summaries ---------------------------------


def _compshare(case: Case) -> Any:
    spec = case_args(case, "case.json")
    data = load_json(case.input_bytes())
    kind = spec["kind"]
    if kind == "types":
        return compshare.parse_instance_types(data, ctx("compshare"))
    if kind == "inventory":
        return compshare.parse_inventory(data, spec["zone"])
    if kind == "inventory_map":
        by_zone = data.get("GpuInventoryByZone") if isinstance(data, dict) else data
        return compshare.read_inventory_map(by_zone, spec["zone"])
    return compshare.parse_price_answer(data, spec["charge_type"])


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=lambda v: format(v, "f")))


def compshare_quote_summary(quote: compshare.PriceQuote) -> dict[str, Any]:
    shown = {f.name: getattr(quote, f.name) for f in fields(quote) if f.name != "set_aside"}
    if quote.set_aside:
        shown["set_aside"] = [problem.reason for problem in quote.set_aside]
    return dict(_plain(shown))


def compshare_summary(page: Any) -> dict[str, Any]:
    """What a Compshare case's `output.json` holds: records as feed lines, listings, free
    counts or the quote, notes and the page flags."""
    flags: dict[str, Any] = {
        "layout_error": page.layout_error,
        "auth_rejected": page.auth_rejected,
        "api_error": page.api_error,
    }
    if page.missing_fields:
        flags["missing_fields"] = page.missing_fields
    if isinstance(page, compshare.TypesPage):
        for line in feed_dicts(page.records):
            parse_parser_record(line)
        return {
            "records": strip_volatile(feed_dicts(page.records)),
            "listings": [asdict(listing) for listing in page.listings],
            "zones": page.zones(),
            "notes": page.notes,
            **flags,
        }
    if isinstance(page, compshare.InventoryPage):
        return {"free": page.free, "zone_id": page.zone_id, "notes": page.notes, **flags}
    return {
        "quote": compshare_quote_summary(page.quote) if page.quote else None,
        "problem": page.problem.reason if page.problem else None,
        **flags,
    }


def _check_compshare(page: Any, case: Case) -> None:
    assert compshare_summary(page) == case.expected_records()


# -- hyperstack: the price book alone, or flavors joined with the recorded book ------------


# -- ucloud: two actions, compared as page summaries ---------------------------------------


def _ucloud(case: Case) -> Any:
    spec = case_args(case, "case.json")
    data = load_json(case.input_bytes())
    if spec["kind"] == "types":
        return ucloud.parse_instance_types(data, ctx("ucloud"))
    return ucloud.parse_price_answer(data, spec["charge_type"])


def ucloud_summary(page: Any) -> dict[str, Any]:
    """What a UCloud case's `output.json` holds: records as feed lines and listings, or the
    quote, with notes and the page flags."""
    flags: dict[str, Any] = {
        "layout_error": page.layout_error,
        "auth_rejected": page.auth_rejected,
        "api_error": page.api_error,
    }
    if page.missing_fields:
        flags["missing_fields"] = page.missing_fields
    if isinstance(page, ucloud.TypesPage):
        for line in feed_dicts(page.records):
            parse_parser_record(line)
        return {
            "records": strip_volatile(feed_dicts(page.records)),
            "listings": [asdict(listing) for listing in page.listings],
            "notes": page.notes,
            **flags,
        }
    return {
        "quote": _plain(asdict(page.quote)) if page.quote else None,
        "problem": page.problem.reason if page.problem else None,
        **flags,
    }


def _check_ucloud(page: Any, case: Case) -> None:
    assert ucloud_summary(page) == case.expected_records()


def is_pricebook(case: Case) -> bool:
    return "pricebook" in case.name


def recorded_hyperstack_prices() -> dict[str, hyperstack.BookPrice]:
    path = recordings_of("hyperstack") / "pricebook.json"
    return hyperstack.parse_pricebook(load_json(path.read_bytes())).prices


def _hyperstack(case: Case) -> PageResult:
    data = load_json(case.input_bytes())
    if is_pricebook(case):
        return hyperstack.parse_pricebook(data)
    return hyperstack.parse_flavors(data, recorded_hyperstack_prices(), ctx("hyperstack"))


def book_json(prices: dict[str, hyperstack.BookPrice]) -> dict[str, Any]:
    return {
        name: {
            "list_price": format(p.list_price, "f"),
            "account_price": None if p.account_price is None else format(p.account_price, "f"),
        }
        for name, p in prices.items()
    }


def _check_hyperstack(page: Any, case: Case) -> None:
    if not is_pricebook(case):
        assert_matches_case(page, case)
        return
    assert page.records == []
    assert book_json(page.prices) == case.expected_records()
    for key, value in case.expected_page().items():
        assert getattr(page, key) == value, key


# -- runpod: the catalog, or one cloud's prices against a catalog -------------------------


def recorded_runpod_catalog() -> runpod.Catalog:
    path = recordings_of("runpod") / "gpu_types.json"
    return runpod.parse_catalog(runpod.read_envelope(load_json(path.read_bytes())).data)


def _runpod(case: Case) -> PageResult:
    args = case_args(case)
    answer = runpod.read_envelope(load_json(case.input_bytes()))
    if "cloud" not in args:
        catalog = runpod.parse_catalog(answer.data)
        return PageResult(layout_error=catalog.layout_error, missing_fields=catalog.missing_fields)
    empty = "catalog" in args and args["catalog"] is None
    catalog = runpod.Catalog() if empty else recorded_runpod_catalog()
    return runpod.parse_prices(answer.data, args["cloud"], catalog, ctx("runpod"))


# -- verda: one answer each, the offers built from all of them ----------------------------

VERDA_KINDS = {"on_demand": "on-demand", "spot": "spot"}
VERDA_RECORDED = {
    "on_demand": "recording:verda/availability_on_demand.json",
    "spot": "recording:verda/availability_spot.json",
    "locations": "recording:verda/locations.json",
    "volume_types": "recording:verda/volume_types.json",
}


@dataclass
class VerdaPage(PageResult):
    """A parse result with what a non-offer answer says (checked through page.json)."""

    by_location: dict[str, list[str]] | None = None
    unreadable: list[str] | None = None
    codes: list[str] | None = None
    volume_prices: list[list[str]] | None = None
    token: str | None = None


def verda_answer(args: dict[str, Any], source: str) -> Any:
    """One of the other answers, as the spider hands it on: None when missing or unreadable
    (a layout error)."""
    ref = args.get(source, VERDA_RECORDED[source])
    if ref is None:
        return None
    data = load_ref(ref)
    read: Any
    if source in VERDA_KINDS:
        read = verda.read_availability(data, ctx("verda"), kind=VERDA_KINDS[source])
    elif source == "locations":
        read = verda.read_locations(data, ctx("verda"))
    else:
        read = verda.read_volume_types(data, ctx("verda"))
    return None if read.layout_error is not None else read


def _verda(case: Case) -> VerdaPage:
    args = case_args(case)
    data = load_json(case.input_bytes())
    source = args["source"]
    if source == "instance_types":
        types = verda.read_instance_types(data)
        if types.layout_error is not None:
            return VerdaPage(layout_error=types.layout_error, missing_fields=types.missing_fields)
        others = {s: verda_answer(args, s) for s in VERDA_RECORDED}
        # As the spider says it: a null in args.json is an answer that failed.
        why = {s: "failed" for s, a in others.items() if a is None}
        built = verda.build_offers(verda.Inputs(types, **others, why_missing=why), ctx("verda"))
        return VerdaPage(
            records=built.records, notes=built.notes, missing_fields=built.missing_fields
        )
    if source in VERDA_KINDS:
        availability = verda.read_availability(data, ctx("verda"), kind=VERDA_KINDS[source])
        shown = {k: sorted(v) for k, v in sorted(availability.by_location.items())}
        return VerdaPage(
            records=availability.records,
            layout_error=availability.layout_error,
            missing_fields=availability.missing_fields,
            by_location=shown,
            unreadable=sorted(availability.unreadable),
        )
    if source == "locations":
        locations = verda.read_locations(data, ctx("verda"))
        return VerdaPage(
            records=locations.records,
            layout_error=locations.layout_error,
            missing_fields=locations.missing_fields,
            codes=locations.codes,
        )
    if source == "volume_types":
        volumes = verda.read_volume_types(data, ctx("verda"))
        prices = [[v.volume_type, str(v.amount), v.currency] for v in volumes.prices]
        return VerdaPage(
            records=volumes.records,
            layout_error=volumes.layout_error,
            missing_fields=volumes.missing_fields,
            volume_prices=prices,
        )
    assert source == "token"
    return VerdaPage(token=verda.read_token(data))


# -- xiangongyun: the pricing page, and the robots.txt that lets us read it ----------------


def is_robots(case: Case) -> bool:
    return case.source.suffix == ".txt"


def _xiangongyun(case: Case) -> Any:
    text = case.input_bytes().decode("utf-8")
    if is_robots(case):
        return Protego.parse(text)
    return xiangongyun.parse_pricing(text, ctx("xiangongyun"))


def _check_xiangongyun(page: Any, case: Case) -> None:
    if not is_robots(case):
        assert_matches_case(page, case)
        return
    expected = json.loads((case.folder / "output.json").read_text(encoding="utf-8"))
    for path, allowed in expected["allowed"].items():
        url = f"https://www.xiangongyun.com{path}"
        assert page.can_fetch(url, USER_AGENT) is allowed, path


PARSERS: dict[str, CaseParser] = {
    "autodl": CaseParser(_autodl),
    "azure": json_input(azure.parse_prices, "azure"),
    "compshare": CaseParser(_compshare, _check_compshare),
    "chenyu": json_input(chenyu.parse_gpu_list, "chenyu"),
    "cloudrift": json_input(cloudrift.parse_instance_types, "cloudrift"),
    "cudo": json_input(cudo.parse_machine_types, "cudo"),
    "digitalocean": json_input(digitalocean.parse_sizes, "digitalocean"),
    "featurize": json_input(featurize.parse_instances, "featurize"),
    "gongji": text_input(gongji.parse_pricing, "gongji"),
    "gpuez": json_input(gpuez.parse_machine_list, "gpuez"),
    "gpushare": json_input(gpushare.parse_machine_list, "gpushare"),
    "hyperstack": CaseParser(_hyperstack, _check_hyperstack),
    "jarvislabs": json_input(jarvislabs.parse_server_meta, "jarvislabs"),
    "lambda": json_input(lambdalabs.parse_instance_types, "lambda"),
    "matpool": json_input(matpool.parse_machines, "matpool"),
    "lanyun": CaseParser(
        lambda case: (
            lanyun.parse_regions if case.name.startswith("recorded_region") else lanyun.parse_hosts
        )(load_json(case.input_bytes()), ctx("lanyun"))
    ),
    "novita": json_input(novita.parse_products, "novita"),
    "paperspace": json_input(paperspace.parse_vm_types, "paperspace"),
    "ppio": json_input(ppio.parse_products, "ppio"),
    "primeintellect": json_input(primeintellect.parse_gpu_availability, "primeintellect"),
    "runpod": CaseParser(_runpod),
    "shadeform": json_input(shadeform.parse_instance_types, "shadeform"),
    "suanjia": text_input(suanjia.parse_market, "suanjia"),
    "tencentcloud": CaseParser(
        lambda case: tencentcloud.parse_zone_configs(
            load_json(case.input_bytes()), ctx("tencentcloud"), region=case_args(case)["region"]
        )
    ),
    "tensordock": json_input(tensordock.parse_hostnodes, "tensordock"),
    "ucloud": CaseParser(_ucloud, _check_ucloud),
    "vastai": json_input(vastai.parse_bundles, "vastai"),
    "verda": CaseParser(_verda),
    "vultr": CaseParser(  # a case named *metal* is a bare-metal page, any other a Cloud GPU one
        lambda c: (vultr.parse_metal_plans if "metal" in c.name else vultr.parse_plans)(
            load_json(c.input_bytes()), ctx("vultr")
        )
    ),
    "xiangongyun": CaseParser(_xiangongyun, _check_xiangongyun),
}
