"""The dashboard's pages rendered without a browser (Streamlit's AppTest runs a page's script
in-process): what a first run shows, the Now page's notes on each provider's last crawl, the
Size page's inputs across a language switch, and the generated text in both languages."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from dash_kit import build_demo_db
from streamlit.testing.v1 import AppTest

from dashboards import data, tables
from dashboards.i18n import Lang, used_in_cost
from dashboards.text import md_escape
from dashboards.verdicts import offers_reason_text, reason_text, verdict_text
from gpurent import api
from gpurent_core.billing_facts import BillingFactKind, facts_for
from gpurent_core.catalog import get_catalog
from gpurent_core.model import PriceBasis, RunStatus
from gpurent_core.normalize.gpu import FAMILIES
from sizing.engines import ENGINE_NAMES
from tests.sizing.sizing_kit import build_warehouse, offer, run_for
from tests.warehouse.wh_kit import FeedKit
from warehouse.db import connect
from warehouse.load import load_run


def page(db: str, name: str) -> None:
    """One page, as the app runs it; the language comes from the session ("lang", as the
    sidebar keeps it), so a test can switch it between runs."""
    from pathlib import Path

    import streamlit as st

    from dashboards import pages_availability, pages_index, pages_now, pages_size
    from dashboards.i18n import Lang
    from dashboards.state import Ctx

    pages = {
        "now": pages_now,
        "size": pages_size,
        "index": pages_index,
        "availability": pages_availability,
    }
    lang = Lang(st.session_state.get("lang", "en"))
    pages[name].render(Ctx(db=Path(db), lang=lang, currency="CNY"))


def run_page(db: Path, name: str, lang: str = "en") -> AppTest:
    app = AppTest.from_function(page, args=(str(db), name), default_timeout=120)
    app.session_state["lang"] = lang
    app.run()
    assert not app.exception, app.exception
    return app


def texts(elements: Any) -> list[str]:
    return [str(e.value) for e in elements]


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What the quick start leaves: one crawl of each provider. Two partial on purpose (an
    unreadable item each: their data is fresh) and one whose crawl failed after a good one."""
    root = tmp_path_factory.mktemp("first-run")
    kit = FeedKit(root)
    path = root / "demo.duckdb"
    con = connect(path)
    try:
        for provider, status in (
            ("autodl", RunStatus.OK),
            ("featurize", RunStatus.PARTIAL),
            ("hyperstack", RunStatus.PARTIAL),
            ("vastai", RunStatus.OK),
        ):
            run = kit.run(1, status, provider=provider)
            lines: list[Any] = [kit.offer(run, "h100-1"), kit.offer(run, "h100-2")]
            if status is RunStatus.PARTIAL:
                lines.append(kit.quarantine(run))
            load_run(con, run, kit.write(provider, lines))
        good = kit.run(1, provider="lambda")
        load_run(con, good, kit.write("lambda", [kit.offer(good, "gpu_1x_h100")]))
        load_run(con, kit.run(2, RunStatus.FAILED, provider="lambda", message="HTTP 500"), None)
    finally:
        con.close()
    return path


# --- a first run ---------------------------------------------------------------------------


def test_index_and_availability_say_what_to_run_after_one_crawl(first_run: Path) -> None:
    for name in ("index", "availability"):
        app = run_page(first_run, name)
        hints = [x for x in texts(app.info) if "gpurent demo --db" in x]
        assert len(hints) == 1, (name, texts(app.info))
        assert "\n" not in hints[0]
        # No wall of "too few polls" lines: the one hint says it.
        assert not [x for x in texts(app.markdown) if "too few polls" in x], name
    zh = run_page(first_run, "index", "zh")
    assert any("gpurent demo --db" in x and "历史" in x for x in texts(zh.info))


def test_a_history_draws_without_the_hint(tmp_path: Path) -> None:
    db = build_demo_db(tmp_path, datetime.now(UTC), days=3)
    app = run_page(db, "index")
    assert not [x for x in texts(app.info) if "gpurent demo --db" in x]


def test_a_partial_crawl_with_fresh_data_is_one_caption_not_a_banner_each(
    first_run: Path,
) -> None:
    app = run_page(first_run, "now")
    assert texts(app.warning) == []  # lambda failed, but its offers are stale: not shown
    notes = [x for x in texts(app.caption) if x.startswith("Last crawl partial")]
    assert notes == [
        "Last crawl partial, its data fresh (details on the Providers page): featurize, hyperstack."
    ]
    # Asked for, the failed provider's stale offers come with a warning of their own.
    app.checkbox(key="now_stale").check().run()
    warned = texts(app.warning)
    assert len(warned) == 1 and warned[0].startswith("lambda: last crawl failed")
    assert len([x for x in texts(app.caption) if x.startswith("Last crawl partial")]) == 1


# --- the Size page across a language switch --------------------------------------------------


def test_the_size_form_keeps_its_inputs_when_the_language_changes(first_run: Path) -> None:
    app = run_page(first_run, "size")
    app.number_input(key="size_prompt").set_value(4096)
    app.number_input(key="size_batch").set_value(8)
    app.number_input(key="size_tps").set_value(25)
    app.selectbox(key="size_mode").set_value("lora")
    next(b for b in app.button if b.label == "Size it").click()  # a form commits on submit
    app.run()
    app.session_state["lang"] = "zh"
    app.run()
    assert not app.exception
    shown = {
        key: app.number_input(key=key).value for key in ("size_prompt", "size_batch", "size_tps")
    }
    assert shown == {"size_prompt": 4096, "size_batch": 8, "size_tps": 25}
    assert app.selectbox(key="size_mode").value == "lora"
    assert app.number_input(key="size_prompt").label == "输入 tokens"  # the labels did switch
    assert app.number_input(key="size_tps").label.startswith("每用户生成速度目标")


def test_the_size_page_can_require_nvlink_and_says_so(first_run: Path) -> None:
    app = run_page(first_run, "size")
    app.checkbox(key="size_nvlink").check()
    next(b for b in app.button if b.label == "Size it").click()
    app.run()
    assert not app.exception
    assert app.session_state["size_request"]["require_nvlink"] is True
    assert any(c.value.startswith("Placements over several cards only") for c in app.caption)
    app.session_state["lang"] = "zh"
    app.run()
    assert app.checkbox(key="size_nvlink").value is True
    assert app.checkbox(key="size_nvlink").label.startswith("多卡方案仅限")


# --- the Now page's rows ---------------------------------------------------------------------


def test_now_rows_carry_the_offer_id_the_page_and_the_form_factor(tmp_path: Path) -> None:
    db = build_demo_db(tmp_path, datetime.now(UTC))
    frame = data.now_offers(db, data.NowFilters(include_sold_out=True))
    table = tables.now_table(frame, Lang.EN, datetime.now(UTC))
    ids = [api.offer_id(p, k) for p, k in frame.select("provider", "offer_key").iter_rows()]
    assert table["Offer id"].to_list() == ids
    assert table["Listed at"].str.startswith("https://").all()
    h100 = table[table["GPU"].str.startswith("H100")]
    assert set(h100["GPU"]) == {"H100 SXM"}  # the H100 comes in PCIe, SXM and NVL
    assert set(table[table["GPU"].str.startswith("RTX")]["GPU"]) == {"RTX 4090", "RTX 3090"}
    sxm = data.now_offers(db, data.NowFilters(form_factor="SXM", include_sold_out=True))
    assert set(sxm["gpu_form_factor"]) == {"SXM"} and sxm.height < frame.height
    options = data.filter_options(db)
    assert options.form_factors == ["SXM"]


def test_a_scraped_link_is_only_followed_to_a_web_page() -> None:
    assert tables.safe_url("https://cloud.vast.ai/create/?offer_id=1") == (
        "https://cloud.vast.ai/create/?offer_id=1"
    )
    for bad in ("javascript:alert(1)", "data:text/html,x", "//x", "ftp://x/y", "", None):
        assert tables.safe_url(bad) is None, bad


def test_rows_whose_storage_price_is_unknown_are_marked(tmp_path: Path) -> None:
    db = build_demo_db(tmp_path, datetime.now(UTC))
    frame = data.now_offers(db, data.NowFilters())
    assert not tables.storage_unknown(frame)
    unknown = frame.with_columns(
        storage_price_unknown=pl.Series([True] + [False] * (frame.height - 1))
    )
    assert tables.storage_unknown(unknown)
    for lang, hourly in ((Lang.EN, "True / hour"), (Lang.ZH, "真实每小时")):
        shown = tables.now_table(unknown, lang, datetime.now(UTC))[hourly].to_list()
        assert shown[0].endswith(" *") and not any(s.endswith("*") for s in shown[1:])


def test_the_page_counts_per_card_offers_it_left_out_for_n_cards(tmp_path: Path) -> None:
    db = build_demo_db(tmp_path, datetime.now(UTC))
    answer = data.now_answer(db, data.NowFilters(gpus=4))
    # Every demo offer is one card priced per card; autodl's 4090 shows 5 free, the rest less.
    assert answer.cards_left_out == 5 and answer.frame.height == 1
    assert data.now_answer(db, data.NowFilters()).cards_left_out == 0


# --- generated text in both languages --------------------------------------------------------


def test_billing_facts_follow_the_language() -> None:
    rows = data.billing_facts("autodl")
    zh = tables.billing_facts_table(rows, Lang.ZH)
    en = tables.billing_facts_table(rows, Lang.EN)
    assert "计费粒度" in set(zh["问题"]) and "billing_granularity" in set(en["Question"])
    assert "每次会话向上取整到 1 秒" in set(zh["计入成本的方式"])
    assert "rounds each session up to 1 s" in set(en["Used in the cost"])
    # English is the engine's own sentence, for every fact on file.
    for provider in ("autodl", "runpod", "hyperstack", "vastai"):
        for fact in facts_for(provider):
            assert used_in_cost(Lang.EN, fact) == fact.used_in_cost()
            if fact.fees:
                assert "费用" in used_in_cost(Lang.ZH, fact)
    granularity = next(
        f for f in facts_for("hyperstack") if f.fact is BillingFactKind.BILLING_GRANULARITY
    )
    assert used_in_cost(Lang.ZH, granularity) == "每次会话向上取整到 1 分钟"


def test_the_memory_chart_legend_follows_the_language() -> None:
    breakdown = {"weights": 14.2, "kv_cache": 0.1}
    placements = [api.PlacementFit(1, 14.3, 14.3, 14.3, None, None, None, breakdown)]
    zh = tables.breakdown_frame(placements, Lang.ZH)
    assert set(zh["组成"]) == {"权重", "KV 缓存"}
    assert set(tables.breakdown_frame(placements, Lang.EN)["Part"]) == {"weights", "KV cache"}


@pytest.mark.parametrize(
    ("english", "chinese"),
    [
        (
            "Qwen2.5-7B bf16, 1 x (2048 + 512) tokens on vllm: needs 19.2 GiB per GPU on 1 card "
            "(weights 14.2, KV 0.1, activations 1.4, overhead 1.5, headroom 1.9). Smallest "
            "tier: 1 x 20 GB (19.4 GiB usable each), room for 2 sequences of 2560 tokens.",
            "Qwen2.5-7B bf16，1 条并发序列 ×（输入 2048 + 生成 512）tokens，vllm：1 张卡时每卡"
            "需要 19.2 GiB（权重 14.2，KV 缓存 0.1，激活 1.4，运行开销 1.5，余量 1.9）。最小档"
            "位：1 × 20 GB（每卡可用 19.4 GiB），可容纳 2 条 2560 tokens 的序列。",
        ),
        (
            "Left out, 5 that cannot run the precision: V100 32GB SXM x1: V100: no BF16 "
            "(Volta); use fp16 (5 offers: gpushare, autodl).",
            "已排除 5 个无法运行该精度的报价：V100 32GB SXM x1: V100: 不支持 BF16（Volta），"
            "请改用 fp16（5 个报价：gpushare, autodl）。",
        ),
        (
            "This workload is bandwidth-bound: the faster card is the better buy for throughput.",
            "此负载受带宽限制：更快的卡在吞吐上更划算。",
        ),
        # sizing/checks.py: how an offer meets the targets at a higher degree on the same
        # cards, and the closest miss of a machine that serves several copies
        (
            "Rent acme RTX 4090 24GB x8 (row 1): the cheapest by true monthly cost that fits "
            "and runs bf16 and meets the targets (first token <= 800 ms), at 5840.00 "
            "USD/month (8.0000/h); it meets 800 ms at 8 cards per copy of the model (977 ms "
            "at 4).",
            "租用 acme RTX 4090 24GB x8（第 1 行）：按真实月成本最便宜、装得下、能运行 bf16、"
            "满足目标（首字 ≤ 800 毫秒），每月 5840.00 USD（每小时 8.0000）；它每个模型副本用 "
            "8 张卡时可满足 800 毫秒（每副本 4 张时为 977 毫秒）。",
        ),
        (
            "Closest: RTX 4090 24GB x8: 26.6 tokens/s per user < 1000 target (at 1 card per "
            "copy); 8 cards of this kind would meet it (1000.1 tokens/s per user).",
            "最接近的：RTX 4090 24GB x8: 每用户 26.6 tokens/秒 < 目标 1000（每个模型副本 1 张卡）；"
            "8 张这种卡可以满足（每用户 1000.1 tokens/秒）。",
        ),
        (
            "Runner-up: row 2, acme RTX 3090 24GB x8, is no faster but costs less per token "
            "(0.91 vs 1.20 USD per million tokens).",
            "次选：第 2 行 acme RTX 3090 24GB x8，速度不更快，但每 token 更便宜（每百万 tokens "
            "0.91 对 1.20 USD）。",
        ),
        (
            "Rent acme H100 80GB (form unsaid) x1 (row 1): the cheapest by true hourly cost "
            "that fits and runs bf16, at 1606.00 USD/month (2.2000/h); its speed is unknown "
            "(no figures).",
            "租用 acme H100 80GB（未注明外形规格） x1（第 1 行）：按真实小时成本最便宜、装得下、"
            "能运行 bf16，每月 1606.00 USD（每小时 2.2000）；速度未知（没有数据）。",
        ),
    ],
)
def test_verdict_sentences_in_chinese(english: str, chinese: str) -> None:
    assert verdict_text(english, Lang.ZH) == chinese
    assert verdict_text(english, Lang.EN) == english


def test_an_unknown_sentence_stays_as_the_engine_wrote_it() -> None:
    text = "A sentence no template knows. Smallest tier: 1 x 20 GB (19.4 GiB usable each), room for 2 sequences of 2560 tokens."
    shown = verdict_text(text, Lang.ZH)
    assert shown.startswith("A sentence no template knows. 最小档位")


def test_reasons_follow_the_language() -> None:
    assert reason_text("V100: no FP8", Lang.ZH) == "V100: 不支持 FP8"
    assert reason_text("first token 3618 ms > 1000 ms target", Lang.ZH) == (
        "首字 3618 毫秒 > 目标 1000 毫秒"
    )
    assert (
        offers_reason_text("no card is large enough at any tensor-parallel degree", Lang.ZH)
        == "任何张量并行度下都没有足够大的卡"
    )


def test_a_real_sizing_answer_reads_in_chinese(tmp_path: Path) -> None:
    db = build_demo_db(tmp_path, datetime.now(UTC))
    answer = api.size("Qwen2.5-7B", prompt_tokens=2048, gen_tokens=512, db=db)
    zh = verdict_text(answer.report["verdict"], Lang.ZH)
    assert "每卡需要" in zh and "最小档位" in zh
    for english in ("needs", "per GPU", "Smallest tier", "usable each"):
        assert english not in zh
    missing = api.size("Qwen2.5-7B", prompt_tokens=2048, gen_tokens=512, db=tmp_path / "no.duckdb")
    assert offers_reason_text(missing.report["offers_reason"], Lang.ZH).startswith(
        "无法读取数据仓库"
    )


# --- every sentence the sizing answer writes, in Chinese --------------------------------------


@pytest.fixture(scope="module")
def market(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small market that makes the sizing answer say each of its kinds of sentence: cards
    the catalog lacks figures for (A10G, RTX 5090D), cards whose support cannot be told
    (MTT S4000, an Ascend 910B of unsaid variant, AMD for AWQ), cards that cannot run the
    precision (V100, T4), per-card offers that meet a target only with more cards, whole
    machines, and the same card listed by several providers."""
    acme, zeta = run_for("acme"), run_for("zeta")
    p = Decimal
    return build_warehouse(
        tmp_path_factory.mktemp("market") / "market.duckdb",
        {
            "acme": [
                offer(acme, "3090", "RTX 3090", 24, price=p("1.00")),
                offer(acme, "4090", "RTX 4090", 24, price=p("2.00")),
                offer(acme, "h100", "H100", 80, gpu_form_factor="SXM", price=p("2.50"),
                      available_count=1),
                offer(acme, "a10g", "A10G", 24, gpu_form_factor="PCIe", price=p("0.50")),
                offer(acme, "v100", "V100", 32, gpu_form_factor="SXM", price=p("0.40")),
                offer(acme, "a100", "A100", 80, gpu_form_factor="SXM", price=p("1.50"),
                      available_count=1),
                offer(acme, "5090d", "RTX 5090D", 32, gpu_count=4, price=p("2.00"),
                      price_basis=PriceBasis.INSTANCE),
                offer(acme, "h100x8", "H100", 80, gpu_form_factor="SXM", gpu_count=8,
                      available_count=8, price=p("20.00"), price_basis=PriceBasis.INSTANCE),
                offer(acme, "mtt", "MTT S4000", 48, gpu_form_factor="PCIe", price=p("0.30"),
                      gpu_vendor="moore_threads"),
                offer(acme, "910b", "Ascend 910B", 64, price=p("0.90"), gpu_vendor="huawei"),
                offer(acme, "mi210", "MI210", 64, gpu_form_factor="PCIe", price=p("0.80"),
                      gpu_vendor="amd"),
                offer(acme, "4090x8", "RTX 4090", 24, gpu_count=8, available_count=None,
                      price=p("8.00"), price_basis=PriceBasis.INSTANCE),
                offer(acme, "h100-unsaid", "H100", 80, price=p("2.10"), available_count=1),
                offer(acme, "a800-1", "A800", 80, gpu_form_factor="PCIe", available_count=1),
                offer(acme, "a800-2", "A800", 80, gpu_form_factor="PCIe", available_count=1),
            ],
            "zeta": [
                offer(zeta, "h100-card", "H100", 80, gpu_form_factor="SXM", available_count=8,
                      price=p("2.50")),
                offer(zeta, "h100-one", "H100", 80, gpu_form_factor="SXM", available_count=1,
                      price=p("2.20")),
                offer(zeta, "a800", "A800", 80, gpu_form_factor="PCIe", available_count=1),
                offer(zeta, "l40s", "L40S", 48, gpu_form_factor="PCIe", price=p("0.95")),
                offer(zeta, "t4", "T4", 16, gpu_form_factor="PCIe", price=p("0.20")),
            ],
        },
    )  # fmt: skip


LLAMA8 = {"model": "llama-3.1-8b", "prompt_tokens": 1000, "gen_tokens": 500}
QWEN32_AWQ = {
    "model": "qwen2.5-32b", "precision": "awq", "prompt_tokens": 16000, "gen_tokens": 1000,
    "batch": 8, "ttft_ms": 1000,
}  # fmt: skip
WORKLOADS: list[dict[str, Any]] = [
    {"model": "Qwen2.5-7B", "prompt_tokens": 2048, "gen_tokens": 512},
    {**LLAMA8, "prompt_tokens": 8000, "gpus": 1, "precision": "fp8"},
    QWEN32_AWQ,
    {**QWEN32_AWQ, "gpu": "RTX 5090D"},
    {**LLAMA8, "batch": 64},
    {**LLAMA8, "batch": 8, "tokens_per_s": 200},
    {**LLAMA8, "batch": 8, "tokens_per_s": 30, "ttft_ms": 300},
    {**LLAMA8, "batch": 64, "tokens_per_s": 1000, "gpu": "RTX 4090"},
    {**LLAMA8, "batch": 256, "gpu": "RTX 3090"},
    {**LLAMA8, "gpu": "A100"},
    {**LLAMA8, "gpu": "A10G"},
    {**LLAMA8, "gpu": "MTT S4000"},
    {**LLAMA8, "gpu": "B200"},
    {**LLAMA8, "objective": "hourly", "gpu": "H100"},
    {**LLAMA8, "mode": "qlora"},
    {"model": "llama-3.1-405b", "prompt_tokens": 100000, "gen_tokens": 500},
]

# Each kind of sentence the workloads above must still make the sizing answer write, so
# the test keeps covering them (a reworded template makes one vanish: then add a workload).
SENTENCES_REACHED = (
    "its speed is unknown (",
    "Of the offers whose speed is known",
    "; it meets ",
    "cards of this kind would meet it",
    "FP8 weight-only via Marlin",
    "bandwidth-bound",
    "you pay for the memory that holds it",
    "The catalog's next faster card",
    "compute-bound",
    "Speed unknown:",
    "No offer in stock is known to meet the targets",
    "Closest:",
    "Cannot tell, ",
    "Left out, ",
    "offer set apart",
    "(form unsaid)",
    "fine-tuning",
    "gpurent cannot tell whether any in-stock offer",
    "no in-stock offer that fits is known to meet the targets",
    "offers were looked at: --gpu",
    "no in-stock offer fits this placement",
)

# Two English words in a row (or one of these) is English the page did not translate;
# single technical words (vllm, tokens, GiB, USD, BF16, Marlin) are not sentences.
_WORD = r"(?<![A-Za-z0-9])[A-Za-z]{2,}(?![A-Za-z0-9])"  # "int4", "x8" are no words
_PHRASE = re.compile(rf"{_WORD}(?:[\s-]+{_WORD})+")
_ENGLISH_WORDS = re.compile(
    r"(?<![A-Za-z])(?:the|and|of|per|with|is|it|its|cannot|unknown|offers?|cards?|row|rent|"
    r"left|out|faster|meets?|target|would|no|not)(?![A-Za-z])",
    re.IGNORECASE,
)


def english_left(text: str, names: list[str]) -> list[str]:
    """The English words left in ``text`` once the names it carries over are taken out."""
    for name in sorted(names, key=len, reverse=True):
        text = text.replace(name, " □ ")
    return _PHRASE.findall(text) + _ENGLISH_WORDS.findall(text)


def names_in(report: dict[str, Any]) -> list[str]:
    """What the answer carries over as it is: cards and their catalog labels, providers,
    the model, precisions (in both languages where the page rewrites a card's words)."""
    catalog = get_catalog()
    names = [sku.label for sku in catalog.all()] + list(catalog.models()) + list(FAMILIES)
    names += ["acme", "zeta", report["model"]["name"], report["precision"], report["engine"]]
    for rows in (report["offers"], report["cannot_tell"]):
        names += [row["card"] for row in rows]
    names += [group["card"] for group in report["left_out"]]
    # The launch settings are the engine's own flags and program names, carried over.
    names += list(ENGINE_NAMES.values())
    for note in report["notes"]:
        if note.startswith("Launch "):
            names += re.findall(r"(?<!\S)--?[a-z][\w-]*", note)
    return names + [reason_text(name, Lang.ZH) for name in names]


def test_every_sentence_the_sizing_answer_writes_reads_in_chinese(market: Path) -> None:
    english = []
    for workload in WORKLOADS:
        fields = dict(workload)
        report = api.size(fields.pop("model"), **fields, currency="USD", db=market).report
        names = names_in(report)
        shown = {
            "verdict": (report["verdict"], verdict_text(report["verdict"], Lang.ZH)),
            "offers_reason": (
                report["offers_reason"],
                offers_reason_text(report["offers_reason"], Lang.ZH),
            ),
        }
        notes = [row["note"] for row in [*report["offers"], *report["cannot_tell"]]]
        notes += [group["reason"] for group in report["left_out"]]
        for n, note in enumerate(filter(None, notes)):
            shown[f"note {n}"] = (note, reason_text(note, Lang.ZH))
        for where, (en, zh) in shown.items():
            if en:
                english.append(en)
                left = english_left(zh, names)
                assert not left, (workload, where, left, zh)
    written = " ".join(english)
    missing = [marker for marker in SENTENCES_REACHED if marker not in written]
    assert not missing, missing


# --- the Size page: what cannot be told, and what was left out -------------------------------


@pytest.fixture(scope="module")
def v100s(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """For the Size form's defaults (Qwen2.5-7B, bf16): a card that runs it, the same card
    that cannot (V100) listed three times, and a card whose BF16 support is unknown."""
    acme, zeta = run_for("acme"), run_for("zeta")
    return build_warehouse(
        tmp_path_factory.mktemp("v100s") / "v100s.duckdb",
        {
            "acme": [
                offer(acme, "3090", "RTX 3090", 24),
                offer(acme, "v100-a", "V100", 32, gpu_form_factor="SXM", price=Decimal("0.40")),
                offer(acme, "v100-b", "V100", 32, gpu_form_factor="SXM", price=Decimal("0.41")),
                offer(acme, "mtt", "MTT S4000", 48, gpu_form_factor="PCIe",
                      price=Decimal("0.30"), gpu_vendor="moore_threads"),
            ],
            "zeta": [
                offer(zeta, "v100", "V100", 32, gpu_form_factor="SXM", price=Decimal("0.39")),
            ],
        },
    )  # fmt: skip


def sized(db: Path, lang: str = "en") -> AppTest:
    app = run_page(db, "size", lang)
    next(b for b in app.button if b.label in ("Size it", "开始估算")).click()
    app.run()
    assert not app.exception, app.exception
    return app


def test_the_size_page_shows_what_cannot_be_told_apart_and_groups_what_was_left_out(
    v100s: Path,
) -> None:
    app = sized(v100s)
    headers = texts(app.subheader)
    assert "Cannot tell (1): not ranked, a figure is unknown" in headers
    ranked, untold = (frame.value for frame in app.dataframe)
    assert list(ranked["Provider"]) == ["acme"]  # the RTX 3090 only: unknown is never ranked
    assert untold["GPU"].tolist() == ["MTT S4000 48GB"]
    assert untold["Why"].tolist() == [
        "cannot tell whether it runs bf16: MTT S4000: BF16 support unknown"
    ]
    assert "Left out" in headers
    # Before: three lines, one per V100 offer.
    lines = [x for x in texts(app.markdown) if "V100" in x and "BF16" in x]
    assert lines == [
        md_escape(
            "3 offers, cannot run the precision: V100 32GB SXM x1: V100: no BF16 (Volta); use "
            "fp16 [zeta, acme]"
        )
    ]


def test_the_size_page_reads_in_chinese(v100s: Path) -> None:
    app = sized(v100s, "zh")
    assert "无法判断（1）：未排名，缺少某项数据" in texts(app.subheader)
    untold = app.dataframe[1].value
    assert untold["原因"].tolist() == ["无法判断能否运行 bf16：MTT S4000: BF16 支持情况未知"]
    [verdict] = [x for x in texts(app.info) if "最小档位" in x]
    assert "无法判断，1 个报价单独列出" in verdict and "（1 个报价）" in verdict
    lines = [x for x in texts(app.markdown) if "V100" in x]
    assert len(lines) == 1 and lines[0].startswith("3 个报价，无法运行该精度")


def test_a_damaged_warehouse_is_said_as_damaged(tmp_path: Path) -> None:
    def damaged() -> None:
        raise api.WarehouseDamaged("the warehouse x is damaged")

    with pytest.raises(data.DataUnavailable) as info:
        data._page_read(damaged)()
    assert info.value.kind == "damaged"


def test_the_now_page_ranks_as_cheapest_does_spot_left_out_and_counted(tmp_path: Path) -> None:
    """Audit (surfaces): Now ranked a spot price first with no word, where `cheapest` leaves
    it out and counts it."""
    from gpurent_core.model import PriceKind

    kit = FeedKit(tmp_path)
    db = tmp_path / "spot.duckdb"
    con = connect(db)
    try:
        run = kit.run(1, provider="runpod")
        load_run(con, run, kit.write("r", [
            kit.offer(run, "on-demand", price=Decimal("2.50"), currency="USD"),
            kit.offer(run, "spot", price=Decimal("1.20"), currency="USD",
                      price_kind=PriceKind.SPOT),
        ]))  # fmt: skip
    finally:
        con.close()
    plain = data.now_answer(db, data.NowFilters(display_currency="USD"))
    assert plain.frame["offer_key"].to_list() == ["on-demand"]
    assert plain.spot_left_out == 1
    asked = data.now_answer(db, data.NowFilters(display_currency="USD", include_spot=True))
    assert asked.frame["offer_key"].to_list() == ["spot", "on-demand"]
    assert asked.spot_left_out == 0
    cheapest = api.cheapest(1, currency="USD", db=db)
    assert [o.offer_key for o in cheapest] == plain.frame["offer_key"].to_list()
    for lang in (Lang.EN, Lang.ZH):
        table = tables.now_table(asked.frame, lang, datetime.now(UTC))
        prices = table[table.columns[8]].to_list()
        assert prices[0] != prices[0].split(" (")[0] and "(" not in prices[1]


def sidebar_only() -> None:
    """The app's sidebar alone (AppTest runs this function's source as a script)."""
    from dashboards.app import _sidebar

    _sidebar()


def test_the_sidebar_defaults_to_the_clis_currency(monkeypatch: pytest.MonkeyPatch) -> None:
    """Audit (surfaces): with GPURENT_CURRENCY=EUR the CLI answered in EUR and the page fell
    back to CNY without a word."""
    monkeypatch.setenv("GPURENT_CURRENCY", "EUR")
    app = AppTest.from_function(sidebar_only, default_timeout=60)
    app.run()
    assert not app.exception, app.exception
    (box,) = [s for s in app.sidebar.selectbox if s.key == "currency"]
    assert box.value == "EUR" and {"CNY", "USD"} <= set(box.options)


def test_the_tables_say_what_the_cli_says_under_them() -> None:
    """Audit (surfaces): the rate a cost was converted at, and the stale rows a provider
    still shows (as `cheapest`'s footnote and `gpurent providers` say them)."""
    from datetime import date, timedelta

    now = datetime.now(UTC)
    offers = pl.DataFrame({
        "currency": ["USD", "CNY"], "cost_currency": ["CNY", "CNY"],
        "fx_rate": [Decimal("7.10"), None], "fx_date": [date(2026, 11, 27), None],
    })  # fmt: skip
    assert tables.fx_rates(offers) == ["USD/CNY 7.10 of 2026-11-27"]
    assert tables.fx_rates(offers.filter(pl.col("currency") == "CNY")) == []
    runs = pl.DataFrame([{
        "provider": "vastai", "last_status": "partial", "last_run_at": now,
        "last_offers": 8, "last_quarantined": 0, "quarantined_total": 0,
        "last_good_offers": 8, "last_good_at": now, "last_message": "page 3 failed",
        "stale_offers": 3, "oldest_shown_at": now - timedelta(hours=2),
    }])  # fmt: skip
    table = tables.providers_table(runs, Lang.EN, now)
    assert table["Stale shown (oldest seen)"].to_list()[0].startswith("3 (")
