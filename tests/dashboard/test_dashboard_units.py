"""The dashboard's pure parts, without a browser: labels, formatting, escaping, CSV, frames,
the sizing answer (same as `gpurent size`), and the `gpurent dashboard` command line."""

from __future__ import annotations

import json
import re
import string
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace

import polars as pl
import pytest
import typer
from dash_kit import HOSTILE, build_demo_db
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from dashboards import data, sizer, tables
from dashboards.export import csv_bytes, neutralise
from dashboards.i18n import LABELS, Lang, duration, human_age, money, status_label, t
from dashboards.state import db_from_argv
from dashboards.text import md_escape
from gpurent import api
from gpurent.cli import dashboard as dashboard_cli
from gpurent.cli import size as size_cli

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_db(tmp_path_factory.mktemp("units"), datetime.now(UTC), days=1)


# --- labels and formatting --------------------------------------------------------------


def test_every_label_has_both_languages_with_the_same_placeholders() -> None:
    for key, (en, zh) in LABELS.items():
        assert en.strip() and zh.strip(), key
        assert set(re.findall(r"{(\w+)}", en)) == set(re.findall(r"{(\w+)}", zh)), key


def test_labels_switch_language() -> None:
    assert t(Lang.EN, "page_now") == "Now"
    assert t(Lang.ZH, "page_now") == "当前"
    assert t(Lang.ZH, "offers_count", n=3) == "3 个报价"
    assert status_label(Lang.ZH, "sold_out") == "售罄"
    assert status_label(Lang.EN, "mystery") == "mystery"


@pytest.mark.parametrize(
    ("value", "currency", "shown"),
    [
        (Decimal("1234.565"), "CNY", "¥1,234.56"),  # half-even
        (Decimal("1234.575"), "CNY", "¥1,234.58"),
        (Decimal("2.49"), "USD", "$2.49"),
        (Decimal("0.004"), "USD", "$0.00"),
        (Decimal("-3.5"), "usd", "-$3.50"),
        (Decimal(7), "CHF", "CHF 7.00"),
        (None, "CNY", ""),
    ],
)
def test_money(value: Decimal | None, currency: str, shown: str) -> None:
    assert money(value, currency) == shown


def test_money_refuses_float() -> None:
    with pytest.raises(TypeError):
        money(1.5, "CNY")  # type: ignore[arg-type]


def test_ages() -> None:
    assert human_age(Lang.EN, NOW - timedelta(minutes=90), NOW) == "1h ago"
    assert human_age(Lang.ZH, NOW - timedelta(days=2, hours=3), NOW) == "2天前"
    assert human_age(Lang.EN, None, NOW) == "never"
    assert duration(Lang.EN, timedelta(seconds=-5)) == "0s"


# --- scraped text is text ---------------------------------------------------------------


def _unescape(markdown: str) -> str:
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown)


@given(st.text())
def test_md_escape_leaves_no_markup_and_loses_nothing(text: str) -> None:
    escaped = md_escape(text)
    # Every punctuation character is escaped, so Markdown, HTML, :colour[] and $LaTeX$
    # have nothing to start from; unescaping gives the text back (newlines as spaces).
    assert re.search(r"(?<!\\)[<>*_\[\]$:`]", _unescape_pairs(escaped)) is None
    assert _unescape(escaped) == text.replace("\n", " ")


def _unescape_pairs(escaped: str) -> str:
    """The escaped string with each escape pair removed: what is left must be plain."""
    return re.sub(r"\\[" + re.escape(string.punctuation) + "]", "", escaped)


def test_md_escape_hostile() -> None:
    assert md_escape(HOSTILE) == r"\<script\>alert\(1\)\<\/script\>\<b\>bold\<\/b\>"


def test_csv_neutralises_formulas_and_keeps_numbers() -> None:
    frame = pl.DataFrame(
        {"text": ["=1+2", "+x", "-y", "@z", "plain", None], "n": [Decimal("-1.50")] * 6}
    )
    assert neutralise(frame)["text"].to_list() == ["'=1+2", "'+x", "'-y", "'@z", "plain", None]
    body = csv_bytes(frame).decode("utf-8")
    assert body.startswith("\ufefftext,n\n'=1+2,-1.50\n")


# --- frames -----------------------------------------------------------------------------


def test_reader_says_when_there_is_no_warehouse(tmp_path: Path) -> None:
    with pytest.raises(data.DataUnavailable) as info:
        data.now_offers(tmp_path / "none.duckdb", data.NowFilters())
    assert info.value.kind == "missing"
    assert not (tmp_path / "none.duckdb").exists()


def test_now_offers_filters_and_ranks(demo_db: Path) -> None:
    frame = data.now_offers(demo_db, data.NowFilters())
    # 6 of the 7 rentable offers: acme's newest run failed, so its L40S is stale (rule 11).
    assert frame.height == 6 and frame["rentable"].all()
    assert "acme" not in set(frame["provider"]) and not frame["stale"].any()
    monthly = frame["true_monthly"].to_list()
    assert monthly == sorted(monthly)
    everything = data.now_offers(demo_db, data.NowFilters(include_sold_out=True))
    assert everything.height == 9
    assert set(everything.filter(~pl.col("rentable"))["status"]) == {"sold_out", "unknown"}
    usd = data.now_offers(demo_db, data.NowFilters(display_currency="USD", gpu_model="rtx 4090"))
    assert set(usd["cost_currency"]) == {"USD"} and set(usd["gpu_model"]) == {"RTX 4090"}
    none = data.now_offers(demo_db, data.NowFilters(min_vram_gb=500))
    assert none.height == 0 and "true_monthly" in none.columns


def test_stale_offers_only_on_request_and_counted(demo_db: Path) -> None:
    # acme's newest run failed: its offer is its last good state, not confirmed (rule 11).
    answer = data.now_answer(demo_db, data.NowFilters())
    assert answer.stale_left_out == 1 and answer.frame.height == 6
    assert data.now_answer(demo_db, data.NowFilters(include_sold_out=True)).stale_left_out == 1
    asked = data.now_answer(demo_db, data.NowFilters(include_stale=True))
    assert asked.stale_left_out == 0 and asked.frame.height == 7
    acme = asked.frame.filter(pl.col("provider") == "acme").row(0, named=True)
    assert acme["stale"] is True and acme["offer_key"] == "l40s-1"
    assert tables.age_cell(Lang.EN, acme, datetime.now(UTC)).startswith("stale, ")
    # Filters count only what they match.
    assert data.now_answer(demo_db, data.NowFilters(gpu_model="RTX 4090")).stale_left_out == 0
    # The caption, in both languages.
    assert t(Lang.EN, "stale_left_out", n=1).startswith("1 offers not confirmed")
    assert "1" in t(Lang.ZH, "stale_left_out", n=1)


def test_now_offers_bill_short_sessions_by_the_providers_terms(demo_db: Path) -> None:
    # Stale rows too: acme (newest run failed) is the provider without terms on file.
    month = data.NowFilters(hours_per_month=Decimal(10), include_stale=True)
    short = data.NowFilters(
        hours_per_month=Decimal(10), session_hours=Decimal("0.1"), include_stale=True
    )
    assert short.profile().session_hours == Decimal("0.1")

    def by_key(filters: data.NowFilters) -> dict[tuple[str, str], Decimal]:
        frame = data.now_offers(demo_db, filters)
        return {
            (r["provider"], r["offer_key"]): Decimal(r["true_monthly"])
            for r in frame.iter_rows(named=True)
        }

    plain, sessions = by_key(month), by_key(short)
    # AutoDL and Vast.ai bill per second and "acme" has no terms on file (metered exactly):
    # 6-minute sessions cost what the same hours cost in one stretch.
    assert sessions == plain and plain
    # 0.36-second sessions are rounded up to a whole second where billing is per second.
    tiny = by_key(
        data.NowFilters(
            hours_per_month=Decimal(10), session_hours=Decimal("0.0001"), include_stale=True
        )
    )
    per_second = [k for k in plain if k[0] in ("autodl", "vastai")]
    assert per_second and all(tiny[k] > plain[k] for k in per_second)
    acme = [k for k in plain if k[0] == "acme"]
    assert acme and all(tiny[k] == plain[k] for k in acme)


def test_now_table_formats_money_in_the_display_currency(demo_db: Path) -> None:
    frame = data.now_offers(demo_db, data.NowFilters(include_sold_out=True))
    table = tables.now_table(frame, Lang.ZH, datetime.now(UTC))
    assert list(table.columns)[:2] == ["平台", "GPU"]
    assert table["真实每小时"].str.startswith("¥").all()
    assert HOSTILE in set(table["地区"])
    styled = tables.grey_unrentable(table, frame["rentable"].to_list())
    css = styled.to_html().split("</style>")[0]
    assert tables.GREY in css
    greyed = {int(row) for row in re.findall(r"_row(\d+)_col\d+", css)}
    assert greyed == {i for i, ok in enumerate(frame["rentable"]) if not ok}


def test_providers_overview_counts_quarantine_and_keeps_the_failure(demo_db: Path) -> None:
    frame = data.providers_overview(demo_db)
    acme = frame.filter(pl.col("provider") == "acme").row(0, named=True)
    assert acme["last_status"] == "failed"
    assert acme["last_message"] == f"HTTP 500 {HOSTILE}"
    assert acme["quarantined_total"] == 3
    assert acme["last_good_offers"] == 1
    table = tables.providers_table(frame, Lang.EN, datetime.now(UTC))
    assert tables.failed_providers(frame) == [p == "acme" for p in frame["provider"]]
    assert table.loc[0, "Message"] == f"HTTP 500 {HOSTILE}"


def test_filter_options_follow_the_latest_state(demo_db: Path) -> None:
    options = data.filter_options(demo_db)
    assert "acme" in options.providers and "RTX 4090" in options.gpu_models
    assert "A800" in options.gpu_models  # sold out, still a model one can filter on
    assert 24 in options.vram_sizes and options.vram_sizes == sorted(options.vram_sizes)


# --- sizing: the same answer as the CLI -------------------------------------------------


def test_sizing_matches_gpurent_size(demo_db: Path) -> None:
    request = sizer.SizeRequest(model="Qwen2.5-7B", prompt_tokens=2048, gen_tokens=512, limit=10)
    answer = sizer.size_workload(demo_db, request)
    app = typer.Typer()
    app.add_typer(size_cli.app)
    result = CliRunner().invoke(
        app,
        [
            "size", "--model", "Qwen2.5-7B", "--prompt-tokens", "2048", "--gen-tokens", "512",
            "--currency", "CNY", "--db", str(demo_db), "--format", "json",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    cli = json.loads(result.output)
    assert answer.report["tier_gb"] == cli["tier_gb"]
    assert answer.report["per_gpu_gib"] == cli["per_gpu_gib"]
    mine = [
        (o["provider"], o["offer_key"], str(o["true_monthly"])) for o in answer.report["offers"]
    ]
    theirs = [(o["provider"], o["offer_key"], str(o["true_monthly"])) for o in cli["offers"]]
    assert mine == theirs and mine
    rows = tables.size_offers_table(answer.offers, Lang.EN)
    assert rows["True / month"].str.startswith("¥").all()


def test_sizing_ranks_stale_offers_only_on_request(demo_db: Path) -> None:
    request = sizer.SizeRequest(model="Qwen2.5-7B", prompt_tokens=2048, gen_tokens=512, limit=20)
    answer = sizer.size_workload(demo_db, request)
    # acme's L40S fits, but acme's newest run failed: left out, and counted (rule 11).
    assert "acme" not in {o["provider"] for o in answer.report["offers"]}
    assert answer.stale_left_out == answer.report["stale_left_out"] == 1
    asked = sizer.size_workload(demo_db, replace(request, include_stale=True))
    stale = [o for o in asked.offers if o.stale]
    assert [o.provider for o in stale] == ["acme"] and asked.stale_left_out == 0
    status = tables.size_offers_table(stale, Lang.EN)["Status"].to_list()
    assert status[0].startswith("in stock, stale, ")


def _group(n: int, count: int, step: str = "speed") -> api.LeftOutGroup:
    return api.LeftOutGroup(
        step=step,
        card=f"A800 80GB PCIe x{n}",
        reason="first token 7477 ms > 1000 ms target",
        count=count,
        providers=("acme", "zeta") if count > 1 else ("acme",),
    )


def test_left_out_offers_are_one_line_per_group_with_its_count() -> None:
    groups = [_group(1, 7, "precision"), _group(2, 1)] + [_group(n, 2) for n in range(3, 17)]
    lines = sizer.left_out_lines(groups, Lang.EN)
    assert len(lines) == sizer.LEFT_OUT_SHOWN + 1
    assert lines[0] == (
        "7 offers, cannot run the precision: A800 80GB PCIe x1: first token 7477 ms > 1000 ms "
        "target [acme, zeta]"
    )
    assert lines[1].startswith("1 offer, miss a target: A800 80GB PCIe x2:")
    # The groups past the first twelve: counted on one line, never dropped silently.
    assert lines[-1].startswith("8 more offers in 4 groups")
    zh = sizer.left_out_lines(groups[:1], Lang.ZH)
    assert zh == [
        "7 个报价，无法运行该精度：A800 80GB PCIe x1：首字 7477 毫秒 > 目标 1000 毫秒 [acme, zeta]"
    ]


def test_offers_that_cannot_be_told_have_a_table_of_their_own(demo_db: Path) -> None:
    answer = sizer.size_workload(demo_db, sizer.SizeRequest(model="Qwen2.5-7B"))
    marks = ("decode speed unknown (no bandwidth in the GPU catalog)",)
    row = replace(answer.offers[0], note=None, marks=marks)
    en = sizer.untold_table([row], Lang.EN)
    assert list(en.columns) == [
        "Provider", "GPU", "GPUs", "Status", "Free", "True / hour", "True / month", "Why",
        "Offer id", "Listed at",
    ]  # fmt: skip
    assert en["Why"].tolist() == ["decode speed unknown (no bandwidth in the GPU catalog)"]
    assert en["True / month"].str.startswith("¥").all()
    zh = sizer.untold_table([row], Lang.ZH)
    assert zh["原因"].tolist() == ["解码速度未知（GPU 目录中没有带宽数据）"]


def test_a_row_that_meets_the_targets_with_more_cards_says_so() -> None:
    note = "meets 1000 ms with 4 cards (2358 ms on 1)"
    rows = [
        SimpleNamespace(provider="acme", card="RTX 3090 24GB", note=None),
        SimpleNamespace(provider="zeta", card="H100 80GB SXM", note=note),
    ]
    assert sizer.row_notes(rows, Lang.EN) == [
        "Row 2, zeta H100 80GB SXM: meets 1000 ms with 4 cards (2358 ms on 1)"
    ]
    assert sizer.row_notes(rows, Lang.ZH) == [
        "第 2 行，zeta H100 80GB SXM：用 4 张卡可满足 1000 毫秒（1 张卡时为 2358 毫秒）"
    ]


def test_sizing_errors_are_reported_not_raised_raw(tmp_path: Path) -> None:
    with pytest.raises(sizer.SizingError):
        sizer.size_workload(tmp_path / "x.duckdb", sizer.SizeRequest(model="no-such-model"))
    answer = sizer.size_workload(tmp_path / "x.duckdb", sizer.SizeRequest(model="Qwen2.5-7B"))
    assert not answer.offers and "warehouse not readable" in answer.report["offers_reason"]


# --- the command --------------------------------------------------------------------------


def test_db_from_argv() -> None:
    assert db_from_argv(["--db", "/x/y.duckdb"], Path("/d")) == Path("/x/y.duckdb")
    assert db_from_argv([], Path("/d")) == Path("/d")


def test_streamlit_command_is_headless_private_and_passes_the_db(tmp_path: Path) -> None:
    cmd = dashboard_cli.streamlit_command(8600, tmp_path / "w.duckdb")
    assert cmd[1:4] == ["-m", "streamlit", "run"] and Path(cmd[4]).is_file()
    pairs = dict(zip(cmd[5:-3:2], cmd[6:-3:2], strict=True))
    assert pairs["--server.port"] == "8600"
    assert pairs["--server.headless"] == "true"
    assert pairs["--browser.gatherUsageStats"] == "false"
    assert pairs["--server.address"] == "127.0.0.1"
    assert cmd[-3:] == ["--", "--db", str(tmp_path / "w.duckdb")]


def test_dashboard_command_prints_the_url_and_runs_streamlit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[list[str]] = []

    def fake_call(cmd: list[str], **how: object) -> int:
        calls.append(cmd)
        assert callable(how.get("preexec_fn")), "the server dies with the command"
        return 0

    monkeypatch.setattr(dashboard_cli.subprocess, "call", fake_call)
    app = typer.Typer()
    app.add_typer(dashboard_cli.app)
    app.command("noop")(lambda: None)  # two commands, so "dashboard" is a sub-command
    db = tmp_path / "w.duckdb"
    result = CliRunner().invoke(app, ["dashboard", "--port", "8777", "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "http://localhost:8777" in result.output
    assert calls == [dashboard_cli.streamlit_command(8777, db)]


def test_index_chart_draws_withheld_days_as_gaps(demo_db: Path) -> None:
    from dashboards import charts

    frame = charts.with_gpu_label(data.price_index(demo_db, "USD"))
    assert set(frame["currency"]) == {"USD"}
    rows = charts.index_frame(frame, Lang.EN, "USD")
    withheld = rows[rows["y"].isna()]
    assert len(withheld) == frame.filter(pl.col("index_price").is_null()).height > 0
    assert (withheld["Index per GPU-hour"] == "—").all()
    quoted = rows[rows["y"].notna()]
    assert quoted["Index per GPU-hour"].str.startswith("$").all()
    spec = charts.index_chart(frame, Lang.ZH, "USD").to_dict()
    assert spec["vconcat"][0]["mark"]["invalid"] == "break-paths-show-domains"


def test_availability_frames_and_heat_maps(demo_db: Path) -> None:
    from dashboards import charts

    found = data.availability(demo_db, "RTX 4090", 24, "UTC")
    assert {p.provider for p in found.patterns} == {"autodl", "vastai"}
    assert found.week.height == 2 * 168 and found.day.height == 2 * 24
    assert found.week_coverage() == 0.0  # a day of polls says nothing per weekday yet
    # AutoDL's 4090 is sold out 09-18 UTC in the demo history: never free at 12:00.
    autodl_noon = found.day.filter((pl.col("provider") == "autodl") & (pl.col("hour") == 12))
    assert autodl_noon["share"].to_list() in ([0.0], [None])
    sentences = [tables.pattern_sentence(p, "RTX 4090 24GB", Lang.ZH) for p in found.patterns]
    assert all(s.startswith("RTX 4090 24GB 在 ") for s in sentences)
    week = charts.heat_week_chart(found.week, Lang.EN).to_dict()
    assert week["spec"]["encoding"]["x"]["scale"]["domain"] == list(range(24))
    day = charts.heat_day_chart(found.day, Lang.ZH).to_dict()
    assert day["encoding"]["y"]["field"] == "平台"


def test_offer_timeline_frames(demo_db: Path) -> None:
    from dashboards import charts

    changes = data.offer_timeline(demo_db, "RTX 4090", 24)
    one = changes.filter(pl.col("offer_key") == "4090-bj")
    table = tables.timeline_table(one, Lang.EN)
    assert table.iloc[0]["To (UTC)"] == "now" and table.iloc[0]["Status"] == "in stock"
    assert table["Price per GPU-hour"].str.startswith("¥").all()
    charts.timeline_chart(one, Lang.ZH, datetime.now(UTC)).to_dict()  # builds a valid spec


def test_billing_facts_rows_and_table() -> None:
    autodl = data.billing_facts("autodl")
    by_fact = {r["fact"]: r for r in autodl if r["value"] is not None}
    assert by_fact["billing_granularity"]["used_in_cost"] == "rounds each session up to 1 s"
    assert all(r["source"] and r["as_of"] for r in by_fact.values())
    unknown = [r["fact"] for r in autodl if r["value"] is None]
    assert "minimum_rental" in unknown and "billing_granularity" not in unknown
    # 算家云: nothing on file, every question unknown, in both languages.
    suanjia = data.billing_facts("suanjia")
    assert len(suanjia) == 10 and all(r["value"] is None for r in suanjia)
    zh = tables.billing_facts_table(suanjia, Lang.ZH)
    assert set(zh["答案"]) == {"未知（无来源）"}
    en = tables.billing_facts_table(autodl, Lang.EN)
    assert list(en.columns) == ["Question", "Answer", "Used in the cost", "Source", "As of"]
    assert "2026-10-04" in set(en["As of"])


def test_the_now_page_costs_only_the_cheapest_rows_it_shows(demo_db: Path) -> None:
    everything = data.now_offers(demo_db, data.NowFilters(include_sold_out=True), limit=None)
    first = data.now_offers(demo_db, data.NowFilters(include_sold_out=True), limit=5)
    assert everything.height > 5 and first.height == 5
    assert first["offer_key"].to_list() == everything["offer_key"].to_list()[:5]
    assert data.NOW_ROWS >= 100  # a cap, not a filter: people still see the market
