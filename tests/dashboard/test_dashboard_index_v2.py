"""The price index page without a browser (Streamlit's AppTest): the method choice (gpi-3
by default, gpi-2 and gpi-1 chosen), its series by GPU, form factor, price kind and market,
and the latest day's table with the columns gpi-2 (and gpi-3) add, in both languages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from tests.tracking.index_kit import build_market


def page(db: str) -> None:
    from pathlib import Path

    import streamlit as st

    from dashboards import pages_index
    from dashboards.i18n import Lang
    from dashboards.state import Ctx

    lang = Lang(st.session_state.get("lang", "en"))
    pages_index.render(Ctx(db=Path(db), lang=lang, currency="USD"))


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_market(tmp_path_factory.mktemp("index-page"))


def run_page(db: Path, lang: str = "en") -> AppTest:
    app = AppTest.from_function(page, args=(str(db),), default_timeout=120)
    app.session_state["lang"] = lang
    app.run()
    assert not app.exception, app.exception
    return app


def latest(app: AppTest) -> list[dict[str, Any]]:
    (table,) = app.dataframe
    return list(table.value.to_dict(orient="records"))


def test_gpi_3_is_the_default_and_gpi_2_can_be_chosen(db: Path) -> None:
    app = run_page(db)
    assert app.radio(key="index_method").value == "gpi-3"
    assert app.radio(key="index_method").options == ["gpi-1", "gpi-2", "gpi-3"]
    captions = " ".join(str(c.value) for c in app.caption)
    assert "0 rows withheld (fewer than 3 suppliers" in captions and "Method gpi-3" in captions
    app.radio(key="index_method").set_value("gpi-2").run()
    assert not app.exception, app.exception
    lines = app.multiselect(key="index_gpus")
    assert "H100 80GB SXM · on demand · China" in lines.options
    assert "RTX 4090 24GB form factor not stated · on demand · international" in lines.options
    assert not [o for o in lines.options if "spot" in o]  # on demand unless asked
    rows = latest(app)
    assert {r["Price kind"] for r in rows} == {"on demand"}
    assert {r["Market"] for r in rows} == {"China", "international"}
    sxm = next(r for r in rows if (r["Form factor"], r["Market"]) == ("SXM", "international"))
    # lambda 2.01, runpod 2.21, vastai 2.46 on day 2: median 2.21, p25 2.11, p75 2.335.
    assert (sxm["Index"], sxm["p25"], sxm["p75"]) == ("$2.21", "$2.11", "$2.34")
    assert (sxm["Providers"], sxm["Offers quoting"], sxm["Share in stock"]) == (3, 3, "100%")
    captions = " ".join(str(c.value) for c in app.caption)
    assert "0 rows withheld (fewer than 3 providers" in captions and "Method gpi-2" in captions

    app.multiselect(key="index_kinds").set_value(["spot", "monthly"]).run()
    assert not app.exception, app.exception
    assert {r["Price kind"] for r in latest(app)} == {"spot", "monthly package"}


def test_gpi_1_can_be_chosen(db: Path) -> None:
    app = run_page(db)
    app.radio(key="index_method").set_value("gpi-1").run()
    assert not app.exception, app.exception
    assert set(app.multiselect(key="index_gpus").options) == {"H100 80GB", "RTX 4090 24GB"}
    assert not app.dataframe  # the latest-day table is gpi-2's
    assert any("Method gpi-1" in str(c.value) for c in app.caption)


def test_the_page_in_chinese(db: Path) -> None:
    app = run_page(db, "zh")
    assert app.radio(key="index_method").label == "方法"
    rows = latest(app)
    assert {"规格", "价格类型", "市场", "p25（下四分位）", "p75（上四分位）"} <= set(rows[0])
    assert {r["市场"] for r in rows} == {"中国", "国际"}
    assert "未注明规格" in {r["规格"] for r in rows}
