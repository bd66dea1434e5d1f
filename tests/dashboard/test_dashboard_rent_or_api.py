"""The Size page's rent-or-API panel (``dashboards.rent_or_api_panel``), rendered without a
browser: the same figures as `gpurent size --compare-api`, in English and Chinese, and the
panel only when asked for."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dashboards.i18n import Lang
from dashboards.rent_or_api_panel import figures
from gpurent import api
from tests.dashboard.test_dashboard_pages import run_page, texts
from tests.sizing.sizing_kit import build_warehouse, offer, run_for


@pytest.fixture(scope="module")
def market(tmp_path_factory: pytest.TempPathFactory) -> Path:
    acme = run_for("acme")
    return build_warehouse(
        tmp_path_factory.mktemp("rent-api") / "gpurent.duckdb",
        {
            "acme": [
                offer(acme, "4090", "RTX 4090", 24, price=Decimal("0.40")),
                offer(acme, "a100", "A100", 80, gpu_form_factor="SXM", price=Decimal("1.30")),
            ]
        },
    )


def compared(db: Path, lang: str = "en", *, compare: bool = True) -> AppTest:
    app = run_page(db, "size", lang)
    app.selectbox(key="size_model").set_value("Llama-3.1-8B")
    app.number_input(key="size_batch").set_value(8)
    if compare:
        app.checkbox(key="size_api").check()
    app.number_input(key="size_use").set_value(30)
    next(b for b in app.button if b.label in ("Size it", "开始估算")).click()
    app.run()
    assert not app.exception, app.exception
    return app


def test_the_panel_shows_the_answers_own_figures(market: Path) -> None:
    app = compared(market)
    assert "Rent or call an API, at 30 % of capacity" in texts(app.subheader)
    answer = api.size(
        "Llama-3.1-8B",
        prompt_tokens=2048,
        gen_tokens=512,
        batch=8,
        db=market,
        currency="CNY",
        limit=20,
        utilisation=Decimal("0.3"),
    )
    assert answer.rent_or_api is not None
    rental, cheapest, meet = figures(answer.rent_or_api, Lang.EN)
    shown = {m.label: m.value for m in app.metric}
    assert shown["Cheapest rental, a request"] == rental
    assert shown["Cheapest API, a request"] == cheapest
    assert shown["Renting pays above"] == meet
    assert rental.endswith(" CNY") and cheapest.endswith(" CNY")
    apis = next(f.value for f in app.dataframe if "API" in f.value.columns)
    assert any(a.startswith("deepinfra ") for a in apis["API"])
    assert all(s.startswith("https://") for s in apis["Source"])


def test_the_panel_reads_in_chinese(market: Path) -> None:
    app = compared(market, "zh")
    assert "租卡还是调用 API（30 % of capacity）" in texts(app.subheader)
    labels = {m.label for m in app.metric}
    assert {"最便宜的租用（每请求）", "最便宜的 API（每请求）", "租卡划算的使用率"} <= labels


def test_no_panel_unless_asked(market: Path) -> None:
    app = compared(market, compare=False)
    assert not any(s.startswith("Rent or call an API") for s in texts(app.subheader))
