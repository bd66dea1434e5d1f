"""The sizing answer's sentences (verdict, reasons, offers_reason) in the page's language.

The sizing engine writes them in English, from templates (``sizing/report.py``,
``sizing/verdict.py``, ``sizing/support.py``, ``sizing/checks.py``, ``sizing/answer.py``).
For Chinese the page splits the verdict into its sentences and rewrites each clause it
knows, keeping every figure, name and offer label exactly as the engine gave them; a clause
it does not know (a template added or reworded since) stays in English rather than being
guessed at. Offer labels and provider names are carried over as they are: the patterns
match the engine's words around them, never provider text.

A structured verdict from the engine (each sentence as a key and its values) would make
this a lookup; until it has one, the clauses below follow its templates.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from dashboards.i18n import Lang

Rule = tuple[re.Pattern[str], Callable[[re.Match[str]], str]]

_NUM = r"-?[\d.,]+"
_CUR = r"[A-Z]{3}"
_CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
# Sentences end with a full stop followed by the next sentence's capital (a decimal point is
# followed by a digit; "(see excluded) Cannot" is how the engine joins a reason without one).
_SENTENCE_BREAK = re.compile(r"(?<=[.)])\s+(?=[A-Z])")


def _rule(pattern: str, build: Callable[[re.Match[str]], str]) -> Rule:
    return re.compile(pattern), build


def _some(m: re.Match[str], name: str, text: str) -> str:
    """``text`` with {name} filled when the group matched, else nothing."""
    value = m.group(name)
    return text.format(**{name: value}) if value else ""


def _figure(text: str) -> str:
    """A figure a target reads, as the checks write it: "655 ms", "75.3 tokens/s per user",
    or both joined by "and" (``SpeedTargets.short``)."""
    parts = []
    for part in text.split(" and "):
        found = re.fullmatch(rf"(?P<x>{_NUM}) (?P<unit>ms|tokens/s per user)", part.strip())
        if found is None:
            return text  # not a figure the checks write: as given
        x = found["x"]
        parts.append(f"{x} 毫秒" if found["unit"] == "ms" else f"每用户 {x} tokens/秒")
    return " 且 ".join(parts)


# --- reasons: the checks' words about one card (also alone, in the excluded list) ----------

_FIGURE = {"TFLOPS": " TFLOPS ", "bandwidth": "带宽"}
"""The catalog figures a speed needs, as the Chinese sentences name them."""

_REASONS: list[Rule] = [
    # How an offer meets the targets only with more cards than its cheapest rental
    # (sizing/checks.py: _took_more), and how many cards of a kind would (_more_cards_would).
    # First: the rules below would rewrite the figures inside them half-way. No \b before
    # "meets": after "；它" (a word character) there is no word boundary.
    _rule(
        r"(?<![A-Za-z])meets (?P<t>[^()]+?) with (?P<n>\d+) cards "
        r"\((?P<was>[^()]*) on (?P<m>\d+)\)",
        lambda m: (
            f"用 {m['n']} 张卡可满足 {_figure(m['t'])}（{m['m']} 张卡时为 {_figure(m['was'])}）"
        ),
    ),
    _rule(
        r"(?<![A-Za-z])meets (?P<t>[^()]+?) at (?P<d>\d+) cards per copy of the model "
        r"\((?P<was>[^()]*) at (?P<d0>\d+)\)",
        lambda m: (
            f"每个模型副本用 {m['d']} 张卡时可满足 {_figure(m['t'])}（每副本 {m['d0']} 张时为 "
            f"{_figure(m['was'])}）"
        ),
    ),
    _rule(
        r"(?<![\d.])(?P<n>\d+) cards? of this kind would meet it \((?P<f>[^()]*)\)",
        lambda m: f"{m['n']} 张这种卡可以满足（{_figure(m['f'])}）",
    ),
    _rule(r" ?\(at (?P<n>\d+) cards? per copy\)", lambda m: f"（每个模型副本 {m['n']} 张卡）"),
    _rule(r"\bFP8 tensor cores\b", lambda m: "有 FP8 张量核心"),
    _rule(
        r"\bFP8 weight-only via Marlin \(weights 1 byte, BF16 compute, no FP8 speed-up\)",
        lambda m: "FP8 仅权重（Marlin；权重 1 字节，BF16 计算，FP8 不提速）",
    ),
    _rule(r"\bno FP8\b", lambda m: "不支持 FP8"),
    _rule(r"\bBF16 support unknown\b", lambda m: "BF16 支持情况未知"),
    _rule(
        r"\bno BF16 \((?P<a>[^)]*)\); use fp16", lambda m: f"不支持 BF16（{m['a']}），请改用 fp16"
    ),
    _rule(
        r"\bbitsandbytes kernels unknown off CUDA",
        lambda m: "非 CUDA 平台上的 bitsandbytes 内核支持未知",
    ),
    _rule(
        r"\bno bitsandbytes int8/4-bit kernels before Turing",
        lambda m: "Turing 之前的架构没有 bitsandbytes int8/4-bit 内核",
    ),
    _rule(r"\bllama\.cpp backend unknown", lambda m: "llama.cpp 后端支持未知"),
    _rule(
        r"\b(?P<p>[A-Z0-9]+) int4 kernels unknown off CUDA",
        lambda m: f"非 CUDA 平台上的 {m['p']} int4 内核支持未知",
    ),
    _rule(
        r"\bno (?P<p>[A-Z0-9]+) int4 kernels \((?P<a>[^)]*)\)",
        lambda m: f"没有 {m['p']} int4 内核（{m['a']}）",
    ),
    _rule(r"\b(?P<p>[A-Z0-9]+) via Marlin kernels", lambda m: f"{m['p']}（Marlin 内核）"),
    _rule(
        r"\b(?P<p>[A-Z0-9]+) \(no Marlin before Ampere: slower kernels\)",
        lambda m: f"{m['p']}（Ampere 之前没有 Marlin：内核较慢）",
    ),
    _rule(
        r"card not in the GPU catalog: precision support unknown",
        lambda m: "GPU 目录中没有这张卡：精度支持情况未知",
    ),
    _rule(
        r"variant unsaid, and the catalog has no figures for the family",
        lambda m: "未注明具体型号，目录中也没有该系列的数据",
    ),
    _rule(r"\b(?P<p>\S+) support unknown\b", lambda m: f"{m['p']} 支持情况未知"),
    _rule(r"cannot tell whether it runs (?P<p>\S+?):\s*", lambda m: f"无法判断能否运行 {m['p']}："),
    _rule(r"\bcannot tell:\s*", lambda m: "无法判断："),
    _rule(
        rf"first token (?P<ms>{_NUM}) ms(?: with (?P<k>\d+) prompts at once)? > (?P<t>{_NUM}) ms "
        r"target",
        lambda m: (
            f"首字 {m['ms']} 毫秒"
            + _some(m, "k", "（{k} 个提示同时到达）")
            + f" > 目标 {m['t']} 毫秒"
        ),
    ),
    _rule(
        rf"(?P<most>at most )?(?P<x>{_NUM}) tokens/s per user < (?P<t>{_NUM}) target",
        lambda m: f"每用户{' 至多' if m['most'] else ''} {m['x']} tokens/秒 < 目标 {m['t']}",
    ),
    # sizing/checks.py: either catalog figure missing leaves a speed unknown.
    _rule(
        r"first-token latency unknown \(no (?P<f>TFLOPS|bandwidth) in the GPU catalog\)",
        lambda m: f"首字延迟未知（GPU 目录中没有{_FIGURE[m['f']]}数据）",
    ),
    _rule(
        r"decode speed unknown \(no (?P<f>TFLOPS|bandwidth) in the GPU catalog\)",
        lambda m: f"解码速度未知（GPU 目录中没有{_FIGURE[m['f']]}数据）",
    ),
    _rule(rf"first token <= (?P<t>{_NUM}) ms", lambda m: f"首字 ≤ {m['t']} 毫秒"),
    _rule(rf">= (?P<t>{_NUM}) tokens/s per user", lambda m: f"每用户 ≥ {m['t']} tokens/秒"),
    # A group of left-out offers: "(5 offers: gpushare, autodl)".
    _rule(
        r" \((?P<n>\d+) offers?: (?P<who>[^()]*)\)",
        lambda m: f"（{m['n']} 个报价：{m['who']}）",
    ),
    # A card sold in several form factors whose offer does not say which (sizing/recommend.py).
    _rule(r" \(form unsaid\)", lambda m: "（未注明外形规格）"),
    # A card's offers that cannot be told: "(2 offers)" (sizing/report.py).
    _rule(r" \((?P<n>\d+) offers?\)", lambda m: f"（{m['n']} 个报价）"),
    _rule(r"^no figures$", lambda m: "没有数据"),
]

# --- why there are no offers (sizing/answer.py) ----------------------------------------

_OFFERS_REASONS: list[Rule] = [
    _rule(
        r"no card is large enough at any tensor-parallel degree",
        lambda m: "任何张量并行度下都没有足够大的卡",
    ),
    _rule(
        r"no in-stock offer fits this placement \(sold-out and unknown-stock offers are left "
        r"out\); try another tier, fewer tokens, or crawl again",
        lambda m: (
            "没有能装下此方案的有货报价（售罄和库存未知的报价已排除）；"
            "请换一个档位、减少 tokens 或重新爬取"
        ),
    ),
    _rule(
        r"every in-stock offer that fits was left out by the precision or speed checks "
        r"\(see excluded\)",
        lambda m: "所有装得下的有货报价都被精度或速度检查排除了（见“已排除”）",
    ),
    _rule(
        r"no in-stock offer that fits is known to meet the targets: the rest cannot be told "
        r"\(see cannot_tell\) or were left out \(see excluded\)",
        lambda m: "没有已知满足目标的装得下的有货报价：其余的无法判断或已被排除",
    ),
    _rule(
        r"gpurent cannot tell whether any in-stock offer that fits runs this precision "
        r"\(see cannot_tell\); the rest were left out \(see excluded\)",
        lambda m: (
            "gpurent 无法判断装得下的有货报价能否运行此精度（见“无法判断”）；"
            "其余的已被排除（见“已排除”）"
        ),
    ),
    _rule(
        r" \(only (?P<g>.+?) offers were looked at: --gpu\)",
        lambda m: f"（只看了 {m['g']} 的报价：--gpu）",
    ),
    _rule(
        r"warehouse not readable: no warehouse at (?P<path>.+?) yet: run `gpurent crawl "
        r"--replay` \(offline demo\) or `gpurent crawl` to rank live offers; this is the "
        r"estimate alone",
        lambda m: (
            f"无法读取数据仓库：{m['path']} 还没有数据仓库：运行 `gpurent crawl "
            "--replay`（离线演示）或 `gpurent crawl` 以排名实时报价；这里只有估算"
        ),
    ),
    _rule(r"warehouse not readable: ", lambda m: "无法读取数据仓库："),
]

# --- the verdict's clauses ----------------------------------------------------------------

_PARTS = {
    "weights": "权重",
    "KV": "KV 缓存",
    "activations": "激活",
    "optimizer": "优化器",
    "overhead": "运行开销",
    "headroom": "余量",
}
_OBJECTIVES = {
    "true monthly cost": "真实月成本",
    "true hourly cost": "真实小时成本",
    "cost per million tokens": "每百万 tokens 成本",
    "monthly": "真实月成本",
    "hourly": "真实小时成本",
    "per-token": "每百万 tokens 成本",
}


def _what(text: str) -> str:
    """The workload: "Qwen2.5-7B bf16, 1 x (2048 + 512) tokens on vllm"."""
    found = re.fullmatch(
        r"(?P<m>.+) (?P<p>\S+), (?P<b>\d+) x \((?P<i>\d+) \+ (?P<o>\d+)\) tokens on (?P<e>\S+)",
        text,
    )
    if found:
        return (
            f"{found['m']} {found['p']}，{found['b']} 条并发序列 ×（输入 {found['i']} + 生成 "
            f"{found['o']}）tokens，{found['e']}"
        )
    found = re.fullmatch(
        r"(?P<m>.+) (?P<p>\S+), (?P<mode>\S+) fine-tuning on sequences of (?P<c>\d+) tokens "
        r"x (?P<b>\d+)",
        text,
    )
    if found:
        return (
            f"{found['m']} {found['p']}，{found['mode']} 微调，序列 {found['c']} tokens × "
            f"{found['b']}"
        )
    return text


def _parts(text: str) -> str:
    words = "|".join(_PARTS)
    shown = re.sub(rf"\b(?P<w>{words}) (?P<v>{_NUM})", lambda m: f"{_PARTS[m['w']]} {m['v']}", text)
    return shown.replace(", ", "，")


def _row(text: str) -> str:
    """ "row 3" / "row 48, beyond --limit 10" """
    found = re.fullmatch(r"row (?P<n>\d+)(?:, beyond --limit (?P<l>\d+))?", text)
    if not found:
        return text
    return f"第 {found['n']} 行" + _some(found, "l", "（超出 --limit {l}）")


def _ttft(text: str) -> str:
    return "未知" if text == "unknown" else text.replace(" ms", " 毫秒")


def _targets(text: str) -> str:
    """ "first token <= 1000 ms, >= 30 tokens/s per user" """
    return _reasons(text).replace(", ", "，")


def _reasons(text: str) -> str:
    for pattern, build in _REASONS:
        text = pattern.sub(build, text)
    return text


def _marks(text: str) -> str:
    """What could not be checked, joined by "; " (``CheckedOffer.marks``)."""
    return "；".join(_reasons(mark) for mark in text.split("; "))


_CLAUSES: list[Rule] = [
    # what the workload needs (sizing/report.py: memory_verdict)
    _rule(
        rf"^(?P<what>.+?): needs (?P<need>{_NUM}) GiB per GPU on (?P<n>\d+) cards? "
        r"\((?P<parts>[^)]*)\)\.$",
        lambda m: (
            f"{_what(m['what'])}：{m['n']} 张卡时每卡需要 {m['need']} GiB（{_parts(m['parts'])}）。"
        ),
    ),
    _rule(
        rf"^(?P<what>.+?): needs (?P<need>{_NUM}) GiB per GPU even on (?P<n>\d+) cards, more "
        r"than any single card offers\.$",
        lambda m: (
            f"{_what(m['what'])}：即使用 {m['n']} 张卡，每卡仍需 {m['need']} GiB，"
            "超过任何单卡的显存。"
        ),
    ),
    _rule(
        r"^Use pipeline parallelism across nodes, a smaller precision, or less context\.$",
        lambda m: "请跨节点使用流水线并行、更低的精度或更短的上下文。",
    ),
    _rule(
        rf"^Smallest tier: (?P<n>\d+) x (?P<gb>\d+) GB \((?P<u>{_NUM}) GiB usable each\), room "
        rf"for (?P<c>\d+) sequences of (?P<t>\d+) tokens(?P<micro> per micro-batch)?\.$",
        lambda m: (
            f"最小档位：{m['n']} × {m['gb']} GB（每卡可用 {m['u']} GiB），可容纳 "
            f"{m['c']} 条 {m['t']} tokens 的序列{'（每个微批次）' if m['micro'] else ''}。"
        ),
    ),
    _rule(r"^Also fits: (?P<list>.+)\.$", lambda m: f"也装得下：{m['list'].replace(', ', '，')}。"),
    # what to launch with (sizing/report.py: launch_text); the flags are the engine's own
    _rule(
        r"^Launch (?P<engine>.+?) with (?P<flags>-.+?) (?:for row 1|on (?P<n>\d+) x "
        r"(?P<gb>\d+) GB)(?:, one server per (?P<tp>\d+) cards? \((?P<c>\d+) copies\))?: "
        r"the estimate assumes these settings\.$",
        lambda m: (
            f"用 {m['engine']} 启动，参数 {m['flags']}，"
            + ("用于第 1 行" if m["n"] is None else f"用于 {m['n']} × {m['gb']} GB")
            + (f"，每 {m['tp']} 张卡一个服务（{m['c']} 份副本）" if m["tp"] else "")
            + "：估算以这些设置为前提。"
        ),
    ),
    # which offer to rent (sizing/verdict.py)
    _rule(
        r"^Rent (?P<label>.+?) \(row 1\): the cheapest by (?P<o>true monthly cost|true hourly "
        r"cost|cost per million tokens) that fits",
        lambda m: f"租用 {m['label']}（第 1 行）：按{_OBJECTIVES[m['o']]}最便宜、装得下",
    ),
    _rule(r" and runs (?P<p>\S+?)(?=[,;.]| and)", lambda m: f"、能运行 {m['p']}"),
    _rule(
        r" and meets the targets \((?P<t>[^)]*)\)", lambda m: f"、满足目标（{_targets(m['t'])}）"
    ),
    _rule(
        rf", at (?P<m>{_NUM}) (?P<cur>{_CUR})/month \((?P<h>{_NUM})/h\)",
        lambda m: f"，每月 {m['m']} {m['cur']}（每小时 {m['h']}）",
    ),
    _rule(
        rf"; at (?P<b>\d+) concurrent users? it gives ~(?P<pu>{_NUM}) tokens/s per user "
        rf"\((?P<all>{_NUM}) in all, prefill included\), first token (?P<ttft>unknown|{_NUM} ms)"
        rf"(?: for a prompt alone, up to (?P<worst>{_NUM} ms) with all (?P<k>\d+)(?P<copy> of a "
        rf"copy)? at once)?, (?P<pm>\S+) (?P<cur>{_CUR}) per million tokens",
        lambda m: (
            f"；{m['b']} 个并发用户时每用户约 {m['pu']} tokens/秒（合计 {m['all']}，含预填充），"
            + (
                f"首字 {_ttft(m['ttft'])}"
                if m["worst"] is None
                else f"单个提示首字 {_ttft(m['ttft'])}，"
                + ("每个副本的 " if m["copy"] else "")
                + f"{m['k']} 个提示同时到达时最多 {_ttft(m['worst'])}"
            )
            + f"，每百万 tokens {m['pm']} {m['cur']}"
        ),
    ),
    # The marks hold parentheses of their own ("... (no TFLOPS in the GPU catalog)").
    _rule(
        r"; its speed is unknown \((?P<why>(?:[^()]|\([^()]*\))*)\)",
        lambda m: f"；速度未知（{_marks(m['why'])}）",
    ),
    _rule(r"; it (?=meets )", lambda m: "；它"),
    _rule(
        r" \((?P<c>\d+) cards, (?P<tp>\d+) per copy of the model(?:, (?P<k>\d+) copies)?\)",
        lambda m: (
            f"（{m['c']} 张卡，每个模型副本 {m['tp']} 张" + _some(m, "k", "，共 {k} 个副本") + "）"
        ),
    ),
    # the runner-up
    _rule(
        rf"^Runner-up: (?P<row>row \d+(?:, beyond --limit \d+)?), (?P<label>.+?), decodes "
        rf"(?P<x>{_NUM})x faster \((?P<sp>{_NUM}) tokens/s per user\) for (?P<p>{_NUM})x the "
        rf"hourly price, so it (?P<verb>saves|costs) (?P<d>\S+) (?P<cur>{_CUR}) (?:more )?per "
        r"million tokens \((?P<a>\S+) vs (?P<z>\S+)\)\.$",
        lambda m: (
            f"次选：{_row(m['row'])} {m['label']}，解码快 {m['x']} 倍（每用户 {m['sp']} "
            f"tokens/秒），每小时价格为 {m['p']} 倍，因此每百万 tokens "
            f"{'节省' if m['verb'] == 'saves' else '多花'} {m['d']} {m['cur']}（{m['a']} 对 {m['z']}）。"
        ),
    ),
    _rule(
        rf"^Runner-up: (?P<row>row \d+(?:, beyond --limit \d+)?), (?P<label>.+?), is no faster "
        rf"but costs less per token \((?P<a>\S+) vs (?P<z>\S+) (?P<cur>{_CUR}) per million "
        r"tokens\)\.$",
        lambda m: (
            f"次选：{_row(m['row'])} {m['label']}，速度不更快，但每 token 更便宜（每百万 "
            f"tokens {m['a']} 对 {m['z']} {m['cur']}）。"
        ),
    ),
    _rule(
        rf"^Of the offers whose speed is known, (?P<row>row \d+(?:, beyond --limit \d+)?), "
        rf"(?P<label>.+?), is the cheapest per token \((?P<pm>\S+) (?P<cur>{_CUR}) per million "
        rf"tokens, ~(?P<pu>{_NUM}) tokens/s per user\)\.$",
        lambda m: (
            f"在速度已知的报价中，{_row(m['row'])} {m['label']} 每 token 最便宜（每百万 "
            f"tokens {m['pm']} {m['cur']}，每用户约 {m['pu']} tokens/秒）。"
        ),
    ),
    _rule(
        r"^This workload is bandwidth-bound: the faster card is the better buy for throughput\.$",
        lambda m: "此负载受带宽限制：更快的卡在吞吐上更划算。",
    ),
    _rule(
        r"^This workload is capacity-bound: you pay for the memory that holds it, so take the "
        r"faster card only if you need its speed\.$",
        lambda m: "此负载受容量限制：你付费买的是容纳它的显存，只有确实需要速度时才选更快的卡。",
    ),
    _rule(r"^No offer in stock decodes faster\.$", lambda m: "库存中没有解码更快的报价。"),
    _rule(
        r"^This workload is capacity-bound: the memory it needs decides the card\.$",
        lambda m: "此负载受容量限制：由所需显存决定选哪张卡。",
    ),
    _rule(
        r"^No faster card in the catalog holds it\.$", lambda m: "目录中没有能容纳它的更快的卡。"
    ),
    _rule(
        rf"^The catalog's next faster card that holds it, (?P<label>.+?) \((?P<bw>{_NUM}) GB/s "
        rf"against (?P<bw0>{_NUM})(?:, ~(?P<g>{_NUM}) tokens/s per user)?\), is not in stock "
        r"now: its cost per token cannot be priced\.$",
        lambda m: (
            f"目录中能容纳它的下一档更快的卡 {m['label']}（{m['bw']} GB/s，对比 "
            f"{m['bw0']}"
            + _some(m, "g", "，每用户约 {g} tokens/秒")
            + "）目前无货：无法计算其每 token 成本。"
        ),
    ),
    _rule(
        r"^At this batch decode is compute-bound there: more memory bandwidth buys nothing, "
        r"only more TFLOPS would\.$",
        lambda m: "在此批量下解码受算力限制：更多显存带宽无济于事，只有更高的 TFLOPS 才有用。",
    ),
    _rule(
        r"^Speed unknown: the GPU catalog has no bandwidth figure for any fitting card\.$",
        lambda m: "速度未知：GPU 目录中没有任何合适卡的带宽数据。",
    ),
    # no offer meets the targets
    _rule(
        r"^No offer in stock is known to meet the targets \((?P<t>[^)]*)\)(?:; (?P<n>\d+) cannot "
        r"be told \(a figure the target needs is unknown\), listed apart)?\.$",
        lambda m: (
            f"没有已知满足目标（{_targets(m['t'])}）的有货报价"
            + _some(m, "n", "；{n} 个无法判断（缺少目标所需的数据），单独列出")
            + "。"
        ),
    ),
    _rule(
        r"^Closest: (?P<lines>.+?)(?: \(and (?P<more>\d+) more cards\))?\.$",
        lambda m: f"最接近的：{m['lines']}" + _some(m, "more", "（另有 {more} 种卡）") + "。",
    ),
    _rule(
        r"^Loosen a target, rent more cards per copy \(--gpus\), serve fewer users, or use a "
        r"smaller precision\.$",
        lambda m: "请放宽目标、每个副本租用更多卡（--gpus）、减少用户或降低精度。",
    ),
    # what was set apart or left out (sizing/report.py)
    _rule(
        r"^Cannot tell, (?P<n>\d+) offers? set apart \(not ranked\): (?P<lines>.+?)"
        r"(?:; and (?P<more>\d+) more cards)?\.$",
        lambda m: (
            f"无法判断，{m['n']} 个报价单独列出（未排名）：{m['lines']}"
            + _some(m, "more", "；另有 {more} 种卡")
            + "。"
        ),
    ),
    _rule(
        r"^Left out, (?P<n>\d+) that (?P<step>cannot run the precision|miss a target): "
        r"(?P<lines>.+?)(?:; and (?P<more>\d+) more)?\.$",
        lambda m: (
            f"已排除 {m['n']} 个"
            + ("无法运行该精度" if m["step"].startswith("cannot") else "未达目标")
            + f"的报价：{m['lines']}"
            + _some(m, "more", "；另有 {more} 组")
            + "。"
        ),
    ),
    _rule(r"^Offers: (?P<why>.+?)\.?$", lambda m: f"报价：{_offers_reason(m['why'])}。"),
]


def _offers_reason(text: str) -> str:
    for pattern, build in _OFFERS_REASONS:
        text = pattern.sub(build, text)
    return text


def _sentence(text: str) -> str:
    """One sentence: its clauses, then the checks' words inside it."""
    for pattern, build in _CLAUSES:
        text = pattern.sub(build, text)
    text = _reasons(text)
    if _CJK.search(text):
        text = text.replace("; ", "；")
        if text.endswith("."):
            text = text[:-1] + "。"
    return text


def verdict_text(text: str | None, lang: Lang) -> str:
    """The sizing verdict in ``lang`` (English as the engine wrote it)."""
    if not text or lang is Lang.EN:
        return text or ""
    out = ""
    for sentence in _SENTENCE_BREAK.split(text):
        shown = _sentence(sentence)
        # After a Chinese full stop no space; between English sentences, one.
        joint = "" if not out or _CJK.search(out[-1]) else " "
        out += joint + shown
    return out


def reason_text(text: str | None, lang: Lang) -> str:
    """A check's reason (an excluded offer's, "V100: no BF16 (Volta); use fp16") in ``lang``."""
    if not text or lang is Lang.EN:
        return text or ""
    return _reasons(text)


def offers_reason_text(text: str | None, lang: Lang) -> str:
    """Why the answer has no offers (``report["offers_reason"]``) in ``lang``."""
    if not text or lang is Lang.EN:
        return text or ""
    return _offers_reason(text)
