"""The dashboard's Buy or rent page (``dashboards.pages_tco``), rendered without a browser
(Streamlit's AppTest): the same answer as `gpurent tco`, in English and Chinese, and no
rental price where no offer can be rented now."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from dashboards.app import PAGES
from dashboards.i18n import money
from dashboards.text import md_escape
from gpurent import api
from tests.api.tco_kit import MEDIAN, build_market, build_unrentable

D = Decimal


def page(db: str) -> None:
    """The page as the app runs it, the language from the session (as the sidebar keeps it)."""
    from pathlib import Path

    import streamlit as st

    from dashboards import pages_tco
    from dashboards.i18n import Lang
    from dashboards.state import Ctx

    lang = Lang(st.session_state.get("lang", "en"))
    currency = st.session_state.get("currency", "CNY")  # the sidebar's, as the app keeps it
    pages_tco.render(Ctx(db=Path(db), lang=lang, currency=currency))


def compared(db: Path, lang: str = "en", **inputs: Any) -> AppTest:
    """The page with the form filled in (15,000 for the card, 0.60 a kWh unless ``inputs``
    say otherwise) and submitted."""
    app = AppTest.from_function(page, args=(str(db),), default_timeout=120)
    app.session_state["lang"] = lang
    app.run()
    assert not app.exception, app.exception
    values = {"tco_price": 15000.0, "tco_power": 0.6} | inputs
    for key, value in values.items():
        if key == "tco_gpu":
            app.text_input(key=key).input(value)
        else:
            app.number_input(key=key).set_value(value)
    next(b for b in app.button if b.label in ("Compare", "比较")).click()
    app.run()
    assert not app.exception, app.exception
    return app


def texts(elements: Any) -> list[str]:
    return [str(e.value) for e in elements]


@pytest.fixture(scope="module")
def market(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_market(tmp_path_factory.mktemp("dash-tco"))


def test_the_page_is_in_the_sidebar() -> None:
    assert ("tco", "page_tco") in [(path, title) for path, title, _ in PAGES]


def test_the_page_gives_the_answer_the_command_line_gives(market: Path) -> None:
    app = compared(market)
    answer = api.tco("RTX 4090", D(15000), hours_per_day=D(8), power_price=D("0.6"),
                     currency="CNY", db=market)  # fmt: skip
    metrics = {m.label: m.value for m in app.metric}
    assert metrics["Owning, 3 years"] == money(answer.own_cost, "CNY") == "¥18,153.60"
    assert metrics["Renting, 3 years"] == money(answer.rent_cost, "CNY") == "¥15,330.00"
    assert metrics["Break-even"] == "9.9 h a day"
    parts = app.dataframe[0].value
    assert parts["Part"].tolist() == ["Purchase", "Resale", "Power", "Owning", "Renting"]
    assert parts["Amount"].tolist()[2] == "¥3,153.60"
    infos = texts(app.info)
    assert md_escape("At 8.0 h a day renting is cheaper, by ¥2,823.60.") in infos
    assert md_escape("Owning is cheaper above 9.9 h a day, renting below.") in infos
    captions = texts(app.caption)
    rent = md_escape(
        f"Rent: {money(MEDIAN, 'CNY')} a card-hour, the median true cost of 4 in-stock offers "
        "from 2 providers (¥1.25 to ¥3.00)."
    )
    assert rent in captions
    assert any(c.startswith("The host") and "assumption" in c for c in captions)
    assert any("not confirmed by their provider" in c for c in captions)  # the stale one


def test_the_form_keeps_its_answer_across_a_language_switch(market: Path) -> None:
    app = compared(market, tco_resale=30, tco_hours=12.0)
    app.session_state["lang"] = "zh"
    app.run()
    assert not app.exception
    metrics = {m.label: m.value for m in app.metric}
    # 30% resale off 15,000, 12 h a day: the same request, said in Chinese.
    own = api.tco("RTX 4090", D(15000), hours_per_day=D(12), power_price=D("0.6"),
                  resale="30%", currency="CNY", db=market).own_cost  # fmt: skip
    assert metrics["拥有 3 年"] == money(own, "CNY")
    assert app.dataframe[0].value["项目"].tolist()[1] == "转售"
    assert app.number_input(key="tco_resale").value == 30
    assert app.number_input(key="tco_resale").label == "期末转售（占购价的 %）"


def test_no_offer_to_rent_is_a_warning_and_no_number(tmp_path: Path) -> None:
    app = compared(build_unrentable(tmp_path))
    [warning] = texts(app.warning)
    assert warning.startswith("No confirmed in-stock offer of RTX 4090 24G")
    metrics = {m.label: m.value for m in app.metric}
    assert metrics["Renting, 3 years"] == "—" and metrics["Break-even"] == "—"
    assert app.dataframe[0].value["Amount"].tolist()[-1] == "—"
    assert not texts(app.info)  # no verdict without a rental price


def test_a_card_without_board_power_is_an_error_on_the_page(market: Path) -> None:
    app = compared(market, tco_gpu="Ascend 910B2")
    [error] = texts(app.error)
    assert error.startswith("Cannot compare:") and "watts" in error
    # Given by hand, the same card compares.
    app = compared(market, tco_gpu="Ascend 910B2", tco_watts=400)
    assert not texts(app.error) and app.metric


def test_the_price_and_the_power_price_are_asked_for(market: Path) -> None:
    app = AppTest.from_function(page, args=(str(market),), default_timeout=120)
    app.run()
    next(b for b in app.button if b.label == "Compare").click()
    app.run()
    assert not app.exception
    assert "Enter the purchase price and the power price." in texts(app.info)
    assert not app.metric


def test_amounts_stay_in_the_currency_they_were_typed_in(market: Path) -> None:
    """15,000 typed while the sidebar said CNY is 15,000 CNY after it says USD: the answer
    stays in CNY and says so (read as 15,000 USD, owning a 4090 flipped to dearer)."""
    app = compared(market)
    before = {m.label: m.value for m in app.metric}
    assert app.number_input(key="tco_price").label.endswith("(CNY)")
    app.session_state["currency"] = "USD"
    app.run()
    assert not app.exception, app.exception
    after = {m.label: m.value for m in app.metric}
    assert after == before and after["Owning, 3 years"] == "¥18,153.60"
    assert any("entered in CNY" in c and "USD" in c for c in texts(app.caption))
