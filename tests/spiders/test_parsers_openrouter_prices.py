"""OpenRouter's model list parser: the recorded answer (OpenRouter's field names and nesting,
invented values) read into prices per million tokens in exact Decimal arithmetic, the models
skipped and why, and the answers that are a changed layout or a failed read, never "no
prices"."""

from __future__ import annotations

import copy
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from spiders.api_prices.parser import (
    CONFLICTING_DUPLICATE,
    DISCOUNT,
    REQUEST_FEE,
    UNREADABLE_MODEL,
    UNREADABLE_PRICE,
    VARIABLE_PRICE,
    NoPrice,
    parse_models,
    per_million,
    plain,
)
from spiders.parsers.common import load_json

RECORDING = Path(__file__).resolve().parents[2] / "spiders/api_prices/recordings/models.json"


def recorded() -> dict[str, Any]:
    doc: dict[str, Any] = load_json(RECORDING.read_bytes())
    return doc


def model(doc: dict[str, Any], model_id: str) -> dict[str, Any]:
    found: dict[str, Any] = next(m for m in doc["data"] if m["id"] == model_id)
    return found


def with_models(*models: dict[str, Any]) -> dict[str, Any]:
    return {"data": [copy.deepcopy(m) for m in models]}


LLAMA_8B = "meta-llama/llama-3.1-8b-instruct"
DEEPSEEK = "deepseek/deepseek-chat"


def test_the_recorded_list_gives_each_readable_price_per_million_tokens_exactly() -> None:
    page = parse_models(recorded())
    assert page.layout_error is None and page.failed_read is None
    prices = {p.api_model: p for p in page.prices}
    assert set(prices) == {
        LLAMA_8B,
        "meta-llama/llama-3-8b-instruct",
        "meta-llama/llama-3.3-70b-instruct:free",
        "meta-llama/llama-3.3-70b-instruct",
        DEEPSEEK,
        "qwen/qwq-32b",
        "google/gemma-2-9b-it",
        "anthropic/claude-3.5-haiku",
    }
    # "0.00000002" USD a token is 0.02 USD a million, exactly (a float would say 0.019999...).
    llama = prices[LLAMA_8B]
    assert (llama.input_per_million, llama.output_per_million) == (Decimal("0.02"), Decimal("0.05"))
    assert llama.hugging_face_id == "meta-llama/Llama-3.1-8B-Instruct" and llama.currency == "USD"
    deepseek = prices[DEEPSEEK]
    assert (deepseek.input_per_million, deepseek.output_per_million) == (
        Decimal("0.27"),
        Decimal("1.1"),
    )
    assert prices["meta-llama/llama-3.3-70b-instruct"].input_per_million == Decimal("0.038")
    for price in page.prices:
        assert isinstance(price.input_per_million, Decimal)
        assert isinstance(price.output_per_million, Decimal)


def test_a_free_model_is_a_price_of_zero_and_says_its_variant() -> None:
    page = parse_models(recorded())
    free = next(p for p in page.prices if p.api_model.endswith(":free"))
    assert free.input_per_million == 0 and free.output_per_million == 0
    assert free.variant == "free"
    assert next(p for p in page.prices if p.api_model == LLAMA_8B).variant is None


def test_a_model_without_a_hugging_face_id_has_none_whether_empty_or_null() -> None:
    page = parse_models(recorded())
    prices = {p.api_model: p for p in page.prices}
    assert model(recorded(), "qwen/qwq-32b")["hugging_face_id"] == ""
    assert model(recorded(), "google/gemma-2-9b-it")["hugging_face_id"] is None
    assert prices["qwen/qwq-32b"].hugging_face_id is None
    assert prices["google/gemma-2-9b-it"].hugging_face_id is None


def test_routers_unreadable_prices_and_request_fees_are_skipped_and_counted() -> None:
    page = parse_models(recorded())
    assert dict(page.skipped) == {VARIABLE_PRICE: 1, UNREADABLE_PRICE: 1, REQUEST_FEE: 1}
    listed = {p.api_model for p in page.prices}
    assert {"openrouter/auto", "qwen/qwen-2.5-7b-instruct", "perplexity/sonar"}.isdisjoint(listed)
    said = "\n".join(page.notes)
    assert "openrouter/auto: variable_price" in said
    assert "qwen/qwen-2.5-7b-instruct: unreadable_price" in said and "'n/a'" in said
    assert "perplexity/sonar: request_fee" in said and "0.005 USD per request" in said


def test_the_feed_line_is_json_with_money_as_plain_decimal_strings() -> None:
    from datetime import UTC, datetime

    page = parse_models(recorded())
    llama = next(p for p in page.prices if p.api_model == LLAMA_8B)
    when = datetime(2026, 12, 4, 8, 0, tzinfo=UTC)
    line = llama.feed_line(run_id="r1", observed_at=when, source="https://x/models")
    assert json.loads(json.dumps(line)) == line
    assert line["input_per_million"] == "0.02" and line["output_per_million"] == "0.05"
    assert line["kind"] == "api_price" and line["observed_at"] == "2026-12-04T08:00:00+00:00"
    assert line["hugging_face_id"] == "meta-llama/Llama-3.1-8B-Instruct"


@pytest.mark.parametrize(
    ("written", "per_m"),
    [
        ("0.00000015", Decimal("0.15")),
        ("0.0000011", Decimal("1.1")),
        ("1e-7", Decimal("0.1")),
        (" 0.000002 ", Decimal("2")),
        ("0", Decimal("0")),
        (Decimal("0.0000006"), Decimal("0.6")),  # a JSON number, decoded exactly
        (0, Decimal("0")),
    ],
)
def test_a_per_token_price_is_read_exactly_per_million(written: Any, per_m: Decimal) -> None:
    assert per_million(written, "pricing.prompt") == per_m


@pytest.mark.parametrize(
    ("written", "reason"),
    [
        ("-1", VARIABLE_PRICE),
        ("-0.5", VARIABLE_PRICE),
        ("n/a", UNREADABLE_PRICE),
        ("", UNREADABLE_PRICE),
        ("NaN", UNREADABLE_PRICE),
        ("Infinity", UNREADABLE_PRICE),
        (None, UNREADABLE_PRICE),
        (0.0000002, UNREADABLE_PRICE),  # a float is never taken as money
        (True, UNREADABLE_PRICE),
        ({"usd": "0.1"}, UNREADABLE_PRICE),
    ],
)
def test_a_price_that_is_no_price_is_refused_with_its_reason(written: Any, reason: str) -> None:
    with pytest.raises(NoPrice) as refused:
        per_million(written, "pricing.prompt")
    assert refused.value.reason == reason


def test_plain_writes_decimals_without_trailing_zeros() -> None:
    assert [plain(Decimal(t)) for t in ("0.15000000", "2.000", "0E-8", "100", "1E+2")] == [
        "0.15",
        "2",
        "0",
        "100",
        "100",
    ]


# -- the layout and failed reads --------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        {"models": recorded()["data"]},  # `data` renamed
        {"data": {"models": recorded()["data"]}},  # no longer a list
        recorded()["data"],  # the list without its envelope
        {},
    ],
    ids=["renamed", "not-a-list", "bare-list", "empty-object"],
)
def test_an_answer_without_its_data_list_is_a_layout_change(answer: Any) -> None:
    page = parse_models(answer)
    assert page.layout_error is not None and "'data'" in page.layout_error
    assert page.prices == [] and page.failed_read is None


def test_an_empty_data_list_is_a_failed_read_not_no_prices() -> None:
    page = parse_models({"data": []})
    assert page.failed_read is not None and "empty" in page.failed_read
    assert page.layout_error is None and page.prices == []


def test_an_error_body_is_a_failed_read() -> None:
    page = parse_models({"error": {"code": 503, "message": "upstream unavailable"}})
    assert page.failed_read is not None and "503 upstream unavailable" in page.failed_read
    assert page.layout_error is None and page.prices == []


def test_pricing_renamed_in_every_model_is_a_layout_change_not_unreadable_prices() -> None:
    doc = recorded()
    for m in doc["data"]:
        m["price"] = m.pop("pricing")
    page = parse_models(doc)
    assert page.layout_error is not None
    assert "pricing.prompt" in page.layout_error and "pricing.completion" in page.layout_error
    assert page.prices == []


def test_a_price_gone_from_one_model_skips_that_model_and_names_the_field() -> None:
    doc = recorded()
    del model(doc, LLAMA_8B)["pricing"]["prompt"]
    page = parse_models(doc)
    assert page.layout_error is None
    assert LLAMA_8B not in {p.api_model for p in page.prices}
    assert page.skipped[UNREADABLE_PRICE] == 2  # this one and the recorded "n/a"
    assert page.missing_fields == ["pricing.prompt"]


def test_a_list_without_one_readable_price_is_a_layout_change() -> None:
    doc = recorded()
    for m in doc["data"]:
        m["pricing"]["prompt"] = "see website"
    page = parse_models(doc)
    assert page.layout_error == f"none of the {len(doc['data'])} models has a readable price"
    assert page.prices == []


def test_models_that_are_no_objects_or_have_no_id_are_skipped() -> None:
    llama = model(recorded(), LLAMA_8B)
    nameless = copy.deepcopy(llama)
    nameless["id"] = "  "
    page = parse_models({"data": [llama, "gpt", None, nameless]})
    assert [p.api_model for p in page.prices] == [LLAMA_8B]
    assert page.skipped[UNREADABLE_MODEL] == 3
    assert any("model #2" in note for note in page.notes)


def test_an_id_listed_twice_keeps_one_price_when_equal_and_none_when_not() -> None:
    llama = model(recorded(), LLAMA_8B)
    again = copy.deepcopy(llama)
    page = parse_models(with_models(llama, again))
    assert [p.api_model for p in page.prices] == [LLAMA_8B] and not page.skipped
    dearer = copy.deepcopy(llama)
    dearer["pricing"]["prompt"] = "0.00000009"
    deepseek = model(recorded(), DEEPSEEK)
    page = parse_models(with_models(llama, dearer, deepseek))
    assert [p.api_model for p in page.prices] == [DEEPSEEK]
    assert page.skipped == {CONFLICTING_DUPLICATE: 1}


def test_a_discount_other_than_none_skips_the_model() -> None:
    llama = model(recorded(), LLAMA_8B)
    none_off = copy.deepcopy(llama)
    none_off["pricing"]["discount"] = 0
    assert parse_models(with_models(none_off)).prices[0].input_per_million == Decimal("0.02")
    off = copy.deepcopy(llama)
    off["pricing"]["discount"] = Decimal("0.25")
    page = parse_models(with_models(off, model(recorded(), DEEPSEEK)))
    assert [p.api_model for p in page.prices] == [DEEPSEEK]
    assert page.skipped == {DISCOUNT: 1}


def test_a_request_price_of_zero_is_no_fee_and_a_negative_one_is_variable() -> None:
    llama = model(recorded(), LLAMA_8B)
    assert llama["pricing"]["request"] == "0"
    assert parse_models(with_models(llama)).prices[0].api_model == LLAMA_8B
    variable = copy.deepcopy(llama)
    variable["pricing"]["request"] = "-1"
    page = parse_models(with_models(variable, model(recorded(), DEEPSEEK)))
    assert page.skipped == {VARIABLE_PRICE: 1}


def test_conditional_prices_are_flagged_and_the_default_price_kept() -> None:
    llama = model(recorded(), LLAMA_8B)
    long_prompts = copy.deepcopy(llama)
    long_prompts["pricing"]["overrides"] = [{"min_prompt_tokens": 128000, "prompt": "0.00000004"}]
    [price] = parse_models(with_models(long_prompts)).prices
    assert price.conditional_prices is True and price.input_per_million == Decimal("0.02")
    assert parse_models(with_models(llama)).prices[0].conditional_prices is False
