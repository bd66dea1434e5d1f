"""API prices through the library API (``gpurent.api.api_prices``): the shipped table and the
refreshed list beside the warehouse, dated, aged and flagged old; the placing of OpenRouter's
models in the catalog (another model is no match); why a crawl of the list read nothing.
The refresh itself, a real crawl: tests/spiders/test_crawl_openrouter_prices.py."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from gpurent import api
from gpurent.api.token_prices import (
    ANOTHER_MODEL,
    NOT_IN_CATALOG,
    REFRESHED,
    SHIPPED,
    catalog_match,
    crawl_problem,
)
from sizing.api_prices import (
    OLD_AFTER_DAYS,
    ApiPrice,
    Relation,
    refreshed_path,
    shipped_prices,
    write_refreshed,
)

TODAY = date(2026, 12, 4)


def openrouter(model: str, api_model: str, as_of: date, price: str = "0.02") -> ApiPrice:
    return ApiPrice(
        provider="openrouter",
        api_model=api_model,
        model=model,
        input_per_million=Decimal(price),
        output_per_million=Decimal("0.05"),
        currency="USD",
        as_of=as_of,
        source="https://openrouter.ai/api/v1/models",
    )


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A warehouse path (no file needed: the list reads only the refreshed list beside it)."""
    return tmp_path / "wh" / "gpurent.duckdb"


def refreshed(db: Path, *prices: ApiPrice) -> None:
    write_refreshed(refreshed_path(db), prices, datetime(2026, 12, 4, 9, tzinfo=UTC))


def test_without_a_refreshed_list_the_shipped_table_is_listed_whole(db: Path) -> None:
    listed = api.api_prices(db=db, today=TODAY)
    assert len(listed) == len(shipped_prices()) > 0
    assert {row.origin for row in listed} == {SHIPPED}
    for row in listed:
        assert row.age_days == (TODAY - row.price.as_of).days
        assert row.old is (row.age_days > OLD_AFTER_DAYS)
        assert row.relation is None
        assert row.price.source.startswith("https://")


def test_a_price_is_old_only_after_the_limit(db: Path) -> None:
    edge = TODAY - timedelta(days=OLD_AFTER_DAYS)
    refreshed(
        db,
        openrouter("Llama-3.1-8B", "meta-llama/llama-3.1-8b-instruct", edge),
        openrouter("Gemma-2-9B", "google/gemma-2-9b-it", edge - timedelta(days=1)),
    )
    rows = {r.price.api_model: r for r in api.api_prices(db=db, today=TODAY)}
    at_limit, past = rows["meta-llama/llama-3.1-8b-instruct"], rows["google/gemma-2-9b-it"]
    assert (at_limit.age_days, at_limit.old) == (OLD_AFTER_DAYS, False)
    assert (past.age_days, past.old) == (OLD_AFTER_DAYS + 1, True)
    assert at_limit.origin == past.origin == REFRESHED


def test_a_model_asked_lists_the_same_and_the_equivalent_same_first(db: Path) -> None:
    refreshed(
        db,
        openrouter("Llama-3.3-70B", "meta-llama/llama-3.3-70b-instruct", TODAY, "0.038"),
        openrouter("Llama-3.1-8B", "meta-llama/llama-3.1-8b-instruct", TODAY),
    )
    rows = api.api_prices("Llama-3.1-70B", db=db, today=TODAY)
    assert rows and all(r.price.model in {"Llama-3.1-70B", "Llama-3.3-70B"} for r in rows)
    relations = [r.relation for r in rows]
    assert relations == sorted(relations, key=[Relation.SAME, Relation.EQUIVALENT].index)
    ours = next(r for r in rows if r.price.provider == "openrouter")
    assert ours.relation is Relation.EQUIVALENT and ours.origin == REFRESHED
    assert ours.price.input_per_million == Decimal("0.038")
    row = ours.as_row()
    assert row["relation"] == "equivalent" and row["as_of"] == TODAY and row["old"] is False


def test_the_newest_reading_of_one_api_wins(db: Path) -> None:
    refreshed(
        db,
        openrouter("Llama-3.1-8B", "meta-llama/llama-3.1-8b-instruct", TODAY - timedelta(days=9)),
        openrouter("Llama-3.1-8B", "meta-llama/llama-3.1-8b-instruct", TODAY, "0.03"),
    )
    rows = [r for r in api.api_prices("Llama-3.1-8B", db=db, today=TODAY) if r.origin == REFRESHED]
    assert [(r.price.as_of, r.price.input_per_million) for r in rows] == [(TODAY, Decimal("0.03"))]


def test_an_unknown_model_is_refused_with_the_argument_named(db: Path) -> None:
    with pytest.raises(api.UnknownName) as refused:
        api.api_prices("Not-A-Model-9000B", db=db)
    assert refused.value.argument == "model"


def test_a_refreshed_list_that_cannot_be_read_is_said(db: Path) -> None:
    path = refreshed_path(db)
    path.parent.mkdir(parents=True)
    path.write_text('{"prices": [{"provider": "openrouter"}]}', encoding="utf-8")
    with pytest.raises(api.ApiPricesUnreadable) as refused:
        api.api_prices(db=db)
    assert str(path) in str(refused.value) and "refresh" in str(refused.value)


def test_a_folder_given_as_the_warehouse_is_refused(tmp_path: Path) -> None:
    with pytest.raises(api.NoWarehouse):
        api.api_prices(db=tmp_path)


# -- placing OpenRouter's models in the catalog ------------------------------------------


@pytest.mark.parametrize(
    ("hf_id", "api_model", "model"),
    [
        ("meta-llama/Llama-3.1-8B-Instruct", "meta-llama/llama-3.1-8b-instruct", "Llama-3.1-8B"),
        ("deepseek-ai/DeepSeek-V3", "deepseek/deepseek-chat", "DeepSeek-V3"),
        # No Hugging Face id: the OpenRouter id decides, its variant aside.
        (None, "qwen/qwq-32b", "QwQ-32B"),
        (None, "google/gemma-2-9b-it:free", "Gemma-2-9B"),
    ],
)
def test_a_model_is_placed_by_its_hugging_face_id_else_its_id(
    hf_id: str | None, api_model: str, model: str
) -> None:
    assert catalog_match(hf_id, api_model) == (model, None)


def test_a_name_that_reaches_only_another_model_is_no_match() -> None:
    # "Qwen3-30B" reaches Qwen3-30B-A3B only through an alias whose numbers are not the
    # entry's: it may be another model's weights, so no price is matched to it.
    model, miss = catalog_match("Qwen/Qwen3-30B", "qwen/qwen3-30b")
    assert model is None and miss is not None
    assert (miss.reason, miss.catalog_model) == (ANOTHER_MODEL, "Qwen3-30B-A3B")
    # Llama 3 8B is an entry of its own now (its own window): its own name matches it.
    model, miss = catalog_match("meta-llama/Meta-Llama-3-8B-Instruct", "meta-llama/llama-3-8b")
    assert miss is None and model == "Llama-3-8B"


def test_the_hugging_face_id_decides_even_when_the_catalog_lacks_it() -> None:
    # A fine-tune the catalog does not hold is not its base model, whatever the id says.
    model, miss = catalog_match("NousResearch/Hermes-3-Llama-3.1-8B", "qwen/qwq-32b")
    assert model is None and miss is not None
    assert (miss.reason, miss.name_tried) == (NOT_IN_CATALOG, "NousResearch/Hermes-3-Llama-3.1-8B")


# -- why a crawl of the list read nothing ------------------------------------------------

GOOD: dict[str, Any] = {
    "layout_errors": [],
    "parse_errors": 0,
    "requests_gave_up": 0,
    "pages_parsed": 1,
    "errors": [],
}
LINE = {"kind": "api_price"}


@pytest.mark.parametrize(
    ("returncode", "report", "lines", "says"),
    [
        (None, None, [], "did not finish"),
        (1, None, [], "before its run report"),
        (0, GOOD | {"layout_errors": ["/models: no 'data' list"]}, [], "layout changed"),
        (0, GOOD | {"parse_errors": 1}, [], "could not be parsed"),
        (
            0,
            GOOD | {"requests_gave_up": 1, "errors": ["api error on /models: empty"]},
            [],
            "request failed: api error on /models: empty",
        ),
        (0, GOOD | {"pages_parsed": 0}, [], "request failed: no answer"),
        (1, GOOD, [LINE], "exited with status 1"),
        (0, GOOD, [], "no price"),
    ],
)
def test_a_crawl_that_read_nothing_says_why(
    returncode: int | None, report: dict[str, Any] | None, lines: list[Any], says: str
) -> None:
    problem = crawl_problem(returncode, report, lines)
    assert problem is not None and says in problem


def test_a_crawl_that_read_the_list_has_no_problem() -> None:
    assert crawl_problem(0, GOOD, [LINE]) is None
