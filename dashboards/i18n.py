"""Labels in English and Chinese, and the one place numbers are formatted for people.

Pages never write user-facing words inline: they ask ``t(lang, key)``, so a missing
translation is a KeyError in tests rather than a half-translated page.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import ROUND_HALF_EVEN, Decimal
from enum import StrEnum


class Lang(StrEnum):
    """The dashboard's languages."""

    EN = "en"
    """English."""
    ZH = "zh"
    """Simplified Chinese."""


LANG_NAMES: dict[Lang, str] = {Lang.EN: "English", Lang.ZH: "中文"}

CURRENCY_SYMBOLS: dict[str, str] = {"CNY": "¥", "USD": "$", "EUR": "€", "GBP": "£"}
DISPLAY_CURRENCIES: tuple[str, ...] = ("CNY", "USD")

# key -> (English, Chinese)
LABELS: dict[str, tuple[str, str]] = {
    "app_title": ("gpurent: GPU rental prices", "gpurent：GPU 租赁价格"),
    "language": ("Language", "语言"),
    "currency": ("Display currency", "显示币种"),
    "database": ("Warehouse", "数据仓库"),
    # page titles
    "page_now": ("Now", "当前"),
    "page_size": ("Size my workload", "估算我的负载"),
    "page_tco": ("Buy or rent", "买还是租"),
    "page_index": ("Price index", "价格指数"),
    "page_availability": ("Availability", "可用性"),
    "page_providers": ("Providers", "平台"),
    # errors and notices
    "no_warehouse": (
        "No warehouse at {path} yet. Run `gpurent crawl --replay` (offline demo) or "
        "`gpurent demo`, or start the dashboard with --db PATH.",
        "{path} 还没有数据仓库。先运行 `gpurent crawl --replay`（离线演示）或 "
        "`gpurent demo`，或用 --db PATH 启动看板。",
    ),
    "warehouse_locked": (
        "The warehouse is busy (a crawl is writing). Reload in a few seconds.",
        "数据仓库正忙（爬取正在写入）。请几秒后刷新。",
    ),
    "warehouse_damaged": (
        "The warehouse {path} is damaged (DuckDB cannot read it back): restore a backup, or "
        "start the dashboard with --db on a new warehouse.",
        "数据仓库 {path} 已损坏（DuckDB 无法读取）：请恢复备份，或用 --db 指向新的数据仓库启动看板。",
    ),
    # One line for a warehouse with too little history to draw over time (the quick start's
    # single crawl): what to run for a month of synthetic history.
    "thin_history": (
        "Too little history here to draw over time ({what}). For a month of synthetic history: "
        "`gpurent demo --db var/history.duckdb`, then `gpurent dashboard --db var/history.duckdb`.",
        "这里的历史数据太少，无法绘制随时间的变化（{what}）。如需一个月的模拟历史：运行 "
        "`gpurent demo --db var/history.duckdb`，再运行 `gpurent dashboard --db var/history.duckdb`。",
    ),
    "thin_none": ("no history yet", "还没有历史数据"),
    "thin_days": ("{n} day of crawls", "{n} 天的爬取"),
    "thin_polls": ("too few polls per hour", "每小时的轮询太少"),
    "not_available": (
        "Not available yet: this build of gpurent has no {what}. The page will show it once "
        "that part lands; nothing here is made up.",
        "暂不可用：此版本的 gpurent 还没有{what}。该功能加入后此页即可显示；这里不会显示任何虚构数据。",
    ),
    "what_index": ("price index (warehouse.index)", "价格指数（warehouse.index）"),
    "what_availability": (
        "availability history (warehouse.trends)",
        "可用性历史（warehouse.trends）",
    ),
    "no_rows": ("Nothing matches these filters.", "没有符合筛选条件的结果。"),
    # Now page
    "now_intro": (
        "Cheapest offers of each provider's latest good crawl, by true monthly cost "
        "(add-ons for your storage included).",
        "各平台最近一次成功爬取的报价，按真实月成本（含按你的存储计算的附加费用）从低到高排列。",
    ),
    "filter_min_vram": ("Min VRAM (GB)", "最小显存 (GB)"),
    "filter_gpu": ("GPU model", "GPU 型号"),
    "filter_provider": ("Provider", "平台"),
    "filter_hours": ("Hours per month", "每月使用小时"),
    "filter_session": ("Session, minutes (0 = nonstop)", "单次时长（分钟，0 = 连续）"),
    "filter_storage": ("Storage (GB)", "存储 (GB)"),
    "filter_gpus": ("GPUs", "GPU 数量"),
    "filter_form": ("Form factor", "外形规格"),
    "filter_min_cuda": ("Min CUDA version", "最低 CUDA 版本"),
    "filter_interconnect": ("Interconnect", "互联方式"),
    "host_left_out": (
        "{n} offers left out: their provider does not publish the CUDA version or "
        "interconnect asked for.",
        "已略去 {n} 个报价：其平台未公布所筛选的 CUDA 版本或互联方式。",
    ),
    "show_sold_out": ("Show sold-out and unknown", "显示售罄和未知状态"),
    "size_nvlink": (
        "Several cards only when joined by NVLink (stated, or SXM modules)",
        "多卡方案仅限 NVLink 互联的卡（已标明，或 SXM 模组）",
    ),
    "size_compare_api": (
        "Compare with serverless APIs serving the model",
        "与提供该模型的按量付费 API 对比",
    ),
    "size_utilisation": ("Use of a rental's capacity, %", "租用容量的使用率 %"),
    "api_title": ("Rent or call an API, at {load}", "租卡还是调用 API（{load}）"),
    "api_apis": ("Serverless APIs serving the model", "提供该模型的按量 API"),
    "api_rentals": ("Renting: the cost of a request", "租卡：每个请求的成本"),
    "api_best_rental": ("Cheapest rental, a request", "最便宜的租用（每请求）"),
    "api_best_api": ("Cheapest API, a request", "最便宜的 API（每请求）"),
    "api_break_even": ("Renting pays above", "租卡划算的使用率"),
    "api_break_even_never": ("never (API cheaper at full load)", "永不（满载时 API 仍更便宜）"),
    "api_free": ("never (the API is free)", "永不（API 免费）"),
    "api_none": (
        "No API price in gpurent's table serves this model or one of its architecture "
        "(`gpurent api-prices refresh` reads OpenRouter's list).",
        "gpurent 的价格表中没有提供该模型（或同架构模型）的 API（`gpurent api-prices refresh` "
        "可读取 OpenRouter 的列表）。",
    ),
    "api_old": (
        "{n} API price(s) were read over 180 days ago: check their source.",
        "{n} 个 API 价格读取于 180 天之前：请核对来源。",
    ),
    "api_estimate": (
        "Estimates for choosing: a rental's capacity comes from the speed estimates above "
        "(full load: {full}); API prices carry their date and source.",
        "仅供选择参考：租卡容量来自上面的速度估算（满载：{full}）；API 价格附日期与来源。",
    ),
    "api_col_api": ("API", "API"),
    "api_col_model": ("Model", "模型"),
    "api_col_serves": ("Serves", "精度"),
    "api_col_in": ("Input / M tokens", "输入 / 百万 token"),
    "api_col_out": ("Output / M tokens", "输出 / 百万 token"),
    "api_col_request": ("A request", "每请求"),
    "api_col_as_of": ("As of", "日期"),
    "api_col_source": ("Source", "来源"),
    "api_col_capacity": ("Requests / h at full load", "满载每小时请求数"),
    "api_col_use": ("Use", "使用率"),
    "api_col_break_even": ("Break-even use", "盈亏平衡使用率"),
    "size_nvlink_note": (
        "Placements over several cards only on offers whose cards are joined by NVLink "
        "(stated, or SXM modules); offers that do not say how their cards are joined are left "
        "out of them.",
        "多卡方案只用标明 NVLink 互联（或 SXM 模组）的报价；未说明互联方式的报价不参与多卡方案。",
    ),
    "include_stale": (
        "Include offers their provider's latest crawl did not confirm (stale)",
        "包含平台最近一次爬取未确认的报价（过时）",
    ),
    "stale_left_out": (
        "{n} offers not confirmed by their provider's latest crawl left out "
        "(tick “Include offers … not confirm” to add them, marked stale).",
        "已略去 {n} 个未经平台最近一次爬取确认的报价（勾选“包含……未确认的报价”可加入，并标为过时）。",
    ),
    "spot_left_out": (
        "{n} spot (interruptible) offers left out: the provider may take them back at any time.",
        "已略去 {n} 个竞价（可被中断）报价：平台随时可能收回。",
    ),
    "any": ("Any", "全部"),
    "offers_count": ("{n} offers", "{n} 个报价"),
    "offers_capped": (
        "the {n} cheapest offers (more match: narrow the filters to see the rest)",
        "最便宜的 {n} 个报价（还有更多匹配：缩小筛选条件可查看其余报价）",
    ),
    "stale_provider": (
        "{provider}: last crawl {status}; its offers below are from the last good crawl, {age}.",
        "{provider}：最近一次爬取{status}；下方该平台的报价来自上一次成功爬取（{age}）。",
    ),
    "partial_fresh": (
        "Last crawl {status}, its data fresh (details on the Providers page): {providers}.",
        "最近一次爬取{status}，数据为最新（详见“平台”页）：{providers}。",
    ),
    "storage_unknown_note": (
        "* storage price unknown: the provider's feed lists no storage fee, so the storage "
        "asked for is not in the true cost.",
        "* 存储价格未知：该平台的数据未列出存储费用，所选存储未计入真实成本。",
    ),
    "fx_note": (
        "Converted at {rates} (the source: `gpurent explain`).",
        "按 {rates} 换算（来源见 `gpurent explain`）。",
    ),
    "include_spot": (
        "Include spot (interruptible) prices",
        "包含竞价（可被中断）价格",
    ),
    "cards_left_out": (
        "{n} per-card offers left out: no free count shows {gpus} cards on one machine.",
        "已略去 {n} 个按卡计价的报价：没有空闲数显示单台机器上有 {gpus} 张空闲卡。",
    ),
    "link_open": ("open", "打开"),
    "data_age": ("Data age per provider", "各平台数据时效"),
    "age_ago": ("{age} ago", "{age}前"),
    "never": ("never", "从未"),
    # columns
    "col_provider": ("Provider", "平台"),
    "col_gpu": ("GPU", "GPU"),
    "col_vram": ("VRAM GB", "显存 GB"),
    "col_count": ("GPUs", "卡数"),
    "col_status": ("Status", "状态"),
    "col_free": ("Free", "空闲"),
    "col_true_hourly": ("True / hour", "真实每小时"),
    "col_true_monthly": ("True / month", "真实每月"),
    "col_price": ("Listed price", "标价"),
    "col_region": ("Region", "地区"),
    "col_cuda": ("CUDA", "CUDA"),
    "col_interconnect": ("Interconnect", "互联"),
    "col_age": ("Data age", "数据时效"),
    "col_plan": ("Monthly plan", "月度方案"),
    "col_raw_gpu": ("Provider's GPU name", "平台 GPU 名称"),
    "col_offer_id": ("Offer id", "报价 ID"),
    "col_link": ("Listed at", "来源页面"),
    "col_last_status": ("Last run", "最近一次运行"),
    "col_last_run_age": ("Run age", "运行时距今"),
    "col_offers": ("Offers (last run)", "报价数（最近一次）"),
    "col_quarantined": ("Quarantined (last run)", "隔离行（最近一次）"),
    "col_quarantined_total": ("Quarantined (all)", "隔离行（全部）"),
    "col_good_offers": ("Offers shown", "显示的报价数"),
    "col_good_age": ("Shown data age", "所显示数据时效"),
    "col_stale_kept": ("Stale shown (oldest seen)", "显示中的过时报价（最早一次见到）"),
    "col_message": ("Message", "说明"),
    "col_reason": ("Reason", "原因"),
    "col_field": ("Field", "字段"),
    "col_raw": ("Raw input", "原始输入"),
    "col_run": ("Run", "运行"),
    "col_tp": ("Tensor parallel", "张量并行"),
    "col_need": ("Need GiB/GPU", "需求 GiB/卡"),
    "col_usable": ("Usable GiB/GPU", "可用 GiB/卡"),
    # Every user together, prefill included (sizing.speed: the cycle).
    "col_tokens": ("Tokens/s in all", "总 tokens/秒"),
    "col_per_mtok": ("Per M tokens", "每百万 tokens"),
    "col_gpu_model": ("GPU", "GPU"),
    "col_time": ("Time (UTC)", "时间 (UTC)"),
    "col_index": ("Index", "指数"),
    "col_providers_n": ("Providers", "平台数"),
    # statuses
    "status_in_stock": ("in stock", "有货"),
    "status_low": ("low", "紧张"),
    "status_sold_out": ("sold out", "售罄"),
    "status_unknown": ("unknown", "未知"),
    "unit_second": ("second", "秒"),
    "unit_minute": ("minute", "分钟"),
    "unit_hour": ("hour", "小时"),
    "unit_day": ("day", "天"),
    "unit_week": ("week", "周"),
    "unit_month": ("month", "月"),
    "unit_year": ("year", "年"),
    "basis_gpu": ("GPU", "卡"),
    "basis_instance": ("machine", "整机"),
    "kind_on_demand": ("on demand", "按需"),
    "kind_spot": ("spot", "竞价"),
    "kind_member": ("member", "会员"),
    "kind_commitment": ("commitment", "预留"),
    "run_ok": ("ok", "成功"),
    "run_partial": ("partial", "部分成功"),
    "run_failed": ("failed", "失败"),
    "run_auth_required": ("auth required", "需要认证"),
    "run_layout_changed": ("layout changed", "页面结构变化"),
    # Providers page
    "providers_intro": (
        "Each provider's last crawl. A failed run does not change what the Now page shows: "
        "it keeps the last good data, with its age.",
        "各平台最近一次爬取。失败的运行不会改变“当前”页的数据：仍显示上一次成功的数据及其时效。",
    ),
    "quarantine_title": ("Quarantined input", "被隔离的输入"),
    "quarantine_intro": (
        "Input set aside instead of guessed about, newest first.",
        "无法可靠解析而被隔离（而非猜测）的输入，最新的在前。",
    ),
    "no_providers": ("No provider has run yet.", "还没有任何平台运行过。"),
    "billing_title": ("Billing facts", "计费规则"),
    "billing_intro": (
        "What to check before ordering, each with its source and date. Unknown is not "
        '"none": a question without a source is shown as unknown.',
        "下单前要核对的计费规则，每条都有来源和日期。未知不等于“没有”：没有来源的问题显示为未知。",
    ),
    "billing_provider": ("Provider", "平台"),
    "billing_unknown": ("unknown (no source on file)", "未知（无来源）"),
    "col_fact": ("Question", "问题"),
    "col_value": ("Answer", "答案"),
    "col_used": ("Used in the cost", "计入成本的方式"),
    "col_source": ("Source", "来源"),
    "col_as_of": ("As of", "日期"),
    "nothing_quarantined": ("Nothing quarantined.", "没有被隔离的输入。"),
    # Size page
    "size_intro": (
        "GPU memory for a model and workload, the smallest VRAM tier, and the in-stock offers "
        "that fit, ranked.",
        "计算模型与负载所需显存、最小显存档位，以及能装下的有货报价排名。",
    ),
    "size_model": ("Model", "模型"),
    "size_precision": ("Precision", "精度"),
    "size_prompt": ("Prompt tokens", "输入 tokens"),
    "size_gen": ("Generated tokens", "生成 tokens"),
    "size_batch": ("Concurrent sequences", "并发序列数"),
    "size_engine": ("Engine", "推理引擎"),
    "size_mode": ("Mode", "模式"),
    "size_objective": ("Rank by", "排序依据"),
    "size_submit": ("Size it", "开始估算"),
    "size_breakdown": ("Memory per GPU (GiB)", "每卡显存 (GiB)"),
    "size_tier": ("Smallest tier", "最小显存档位"),
    "size_cards": ("Cards", "卡数"),
    "size_per_gpu": ("Per GPU", "每卡"),
    "size_no_fit": ("No single card is large enough.", "没有单卡放得下。"),
    "size_offers": ("In-stock offers that fit", "能装下的有货报价"),
    "size_part": ("Part", "组成"),
    "size_gib": ("GiB", "GiB"),
    "size_error": ("Cannot size this: {error}", "无法估算：{error}"),
    # Checked for the last of the batch's prompts sent at once (sizing.checks).
    "size_ttft": (
        "Target first token for every user (ms, 0 = any)",
        "每位用户的首字延迟目标（毫秒，0 = 不限）",
    ),
    "size_tps": ("Target tokens/s per user (0 = any)", "每用户生成速度目标（token/秒，0 = 不限）"),
    "size_excluded": ("Left out", "已排除"),
    # Offers whose precision support, or a figure a target needs, is unknown: shown apart,
    # never ranked (sizing/checks.py).
    "size_cannot_tell": (
        "Cannot tell ({n}): not ranked, a figure is unknown",
        "无法判断（{n}）：未排名，缺少某项数据",
    ),
    "col_why": ("Why", "原因"),
    # Left-out offers grouped by card and reason (report["left_out"]), as `gpurent size`.
    "size_left_out_group": (
        "{offers}, {step}: {card}: {reason} [{providers}]",
        "{offers}，{step}：{card}：{reason} [{providers}]",
    ),
    "size_one_offer": ("1 offer", "1 个报价"),
    "size_n_offers": ("{n} offers", "{n} 个报价"),
    "size_step_precision": ("cannot run the precision", "无法运行该精度"),
    "size_step_speed": ("miss a target", "未达目标"),
    "size_left_out_more": (
        "{n} more offers in {groups} groups (`gpurent size --format json` lists every offer "
        "under excluded).",
        "另有 {groups} 组共 {n} 个报价（`gpurent size --format json` 在 excluded 下列出每个报价）。",
    ),
    "size_row_note": ("Row {n}, {offer}: {note}", "第 {n} 行，{offer}：{note}"),
    # the memory breakdown's parts (sizing's Breakdown.as_dict keys)
    "part_weights": ("weights", "权重"),
    "part_kv_cache": ("KV cache", "KV 缓存"),
    "part_activations": ("activations", "激活"),
    "part_optimizer": ("optimizer", "优化器"),
    "part_overhead": ("overhead", "运行开销"),
    "part_headroom": ("headroom", "余量"),
    # billing facts: the checklist's questions and how the cost engine uses a fact
    "fact_billing_granularity": ("billing_granularity", "计费粒度"),
    "fact_billing_starts": ("billing_starts", "计费起点"),
    "fact_storage_while_stopped": ("storage_while_stopped", "停机时的存储费用"),
    "fact_system_disk": ("system_disk", "系统盘"),
    "fact_egress_fee": ("egress_fee", "出网流量费"),
    "fact_public_ip_fee": ("public_ip_fee", "公网 IP 费用"),
    "fact_minimum_rental": ("minimum_rental", "最短租期"),
    "fact_refund_terms": ("refund_terms", "退款规则"),
    "fact_discounts": ("discounts", "折扣"),
    "fact_billing_units": ("billing_units", "计费单位"),
    "fact_no_gpu_mode": ("no_gpu_mode", "无卡模式"),
    "used_rounds": ("rounds each session up to {span}", "每次会话向上取整到 {span}"),
    "used_no_minimum": (
        "no minimum: a short session bills its length",
        "无最短时长：短会话按实际时长计费",
    ),
    "used_minimum": ("bills each session at least {span}", "每次会话至少计费 {span}"),
    "used_boot_billed": ("boot time billed", "开机时间计费"),
    "used_boot_free": ("boot time free", "开机时间免费"),
    "used_fee": (
        "{fee} fee {amount} {currency}{per} per {basis}{free} ({kind}{stopped})",
        "{fee}费用 {amount} {currency}{per}，按{basis}计{free}（{kind}{stopped}）",
    ),
    "used_fee_free": (" beyond {n} free", "，超出免费额度 {n} 部分"),
    "used_fee_mandatory": ("mandatory", "必选"),
    "used_fee_optional": ("optional", "可选"),
    "used_fee_stopped": (", also while stopped", "，停机时也计费"),
    "used_fee_stopped_unknown": (", while stopped: unknown", "，停机时是否计费未知"),
    "fee_system_disk": ("system_disk", "系统盘"),
    "fee_data_disk": ("data_disk", "数据盘"),
    "fee_storage_stopped": ("storage_stopped", "停机存储"),
    "fee_egress": ("egress", "出网流量"),
    "fee_ingress": ("ingress", "入网流量"),
    "fee_public_ip": ("public_ip", "公网 IP"),
    "fee_image": ("image", "镜像"),
    "fee_no_gpu_mode": ("no_gpu_mode", "无卡模式"),
    "fee_vcpu": ("vcpu", "vCPU"),
    "fee_memory": ("memory", "内存"),
    "feebasis_instance": ("instance", "实例"),
    "feebasis_gpu": ("gpu", "卡"),
    "feebasis_gb": ("GB", "GB"),
    "feebasis_tb": ("tb", "TB"),
    "feebasis_vcpu": ("vcpu", "vCPU"),
    "feebasis_gib_ram": ("gib_ram", "GiB 内存"),
    # Buy or rent page (gpurent tco)
    "tco_intro": (
        "What owning a card costs over years (price, power, resale) against renting it at "
        "the median true cost of its confirmed in-stock offers, and the hours a day at which "
        "the two cost the same.",
        "在若干年内拥有一张卡的成本（购价、电费、转售）与按其已确认有货报价的真实成本中位数租用的成本"
        "对比，以及两者相等时的每天使用小时数。",
    ),
    "tco_gpu": ("GPU (as a provider names it)", "GPU（按平台的写法）"),
    "tco_price": ("Purchase price", "购买价格"),
    "tco_hours": ("Hours a day", "每天使用小时"),
    "tco_power_price": ("Power price per kWh", "电价（每千瓦时）"),
    "tco_years": ("Years", "年数"),
    "tco_resale": ("Resale at the end (% of the price)", "期末转售（占购价的 %）"),
    "tco_watts": ("Board power, W (0 = the catalog's)", "板卡功耗 W（0 = 按规格库）"),
    "tco_host_watts": ("Host per card, W (an assumption)", "每卡主机功耗 W（假设值）"),
    "tco_rent_price": (
        "Rental price per card-hour (0 = the tracked median)",
        "每卡时租金（0 = 跟踪的中位数）",
    ),
    "tco_submit": ("Compare", "比较"),
    "tco_missing": ("Enter the purchase price and the power price.", "请输入购买价格和电价。"),
    "tco_typed_in": (
        "The amounts were entered in {typed}: the answer stays in {typed}. Send the form again "
        "to answer in {shown} (with amounts in {shown}).",
        "金额按 {typed} 输入：结果仍以 {typed} 计。如需以 {shown} 计算，请用 {shown} 金额重新提交。",
    ),
    "tco_error": ("Cannot compare: {error}", "无法比较：{error}"),
    "tco_own": ("Owning, {years} years", "拥有 {years} 年"),
    "tco_rent": ("Renting, {years} years", "租用 {years} 年"),
    "tco_break_even": ("Break-even", "盈亏平衡"),
    "tco_hours_a_day": ("{h} h a day", "每天 {h} 小时"),
    "tco_never": ("never", "永不"),
    "tco_cheaper_owning": (
        "At {h} h a day owning is cheaper, by {amount}.",
        "每天 {h} 小时时，拥有更便宜，省 {amount}。",
    ),
    "tco_cheaper_renting": (
        "At {h} h a day renting is cheaper, by {amount}.",
        "每天 {h} 小时时，租用更便宜，省 {amount}。",
    ),
    "tco_cheaper_equal": (
        "At {h} h a day owning and renting cost the same.",
        "每天 {h} 小时时，拥有与租用成本相同。",
    ),
    "tco_above": (
        "Owning is cheaper above {h} h a day, renting below.",
        "每天超过 {h} 小时时拥有更便宜，低于则租用更便宜。",
    ),
    "tco_beyond_day": (
        "Break-even at {h} h a day, more than a day has: renting is cheaper at any use.",
        "盈亏平衡点为每天 {h} 小时，超过一天的长度：任何使用量下租用都更便宜。",
    ),
    "tco_never_note": (
        "Owning never catches up: an hour rented costs no more than the power of an hour owned.",
        "拥有永远追不上：租用一小时的费用不高于自有一小时的电费。",
    ),
    "tco_no_offer": (
        "No confirmed in-stock offer of {gpu}: no rental price to compare with (no guess is "
        "made). Give one by hand, or crawl again.",
        "没有 {gpu} 的已确认有货报价：没有可比较的租金（不做猜测）。请手动填写租金，或重新爬取。",
    ),
    "tco_rent_median": (
        "Rent: {rate} a card-hour, the median true cost of {n} in-stock offers from "
        "{providers} providers ({low} to {high}).",
        "租金：每卡时 {rate}，为 {providers} 个平台 {n} 个有货报价真实成本的中位数（{low} 至 {high}）。",
    ),
    "tco_rent_given": (
        "Rent: {rate} a card-hour, given by hand.",
        "租金：每卡时 {rate}（手动填写）。",
    ),
    "tco_power_note": (
        "Power: {card} W card + {host} W host for {hours} h = {kwh} kWh.",
        "电力：卡 {card} W + 主机 {host} W，共 {hours} 小时 = {kwh} kWh。",
    ),
    "tco_host_assumed": (
        "The host's {w} W per card is an assumption (CPU, memory, disks, fans, power-supply "
        "losses).",
        "每卡主机 {w} W 为假设值（CPU、内存、硬盘、风扇、电源损耗）。",
    ),
    "tco_stale_left_out": (
        "{n} offers not confirmed by their provider's latest crawl left out of the median.",
        "已从中位数中略去 {n} 个未经平台最近一次爬取确认的报价。",
    ),
    "tco_kinds_left_out": (
        "{n} spot, member or committed offers left out: owning is compared with renting on demand.",
        "已略去 {n} 个竞价、会员或预留报价：与按需租用对比。",
    ),
    "col_part": ("Part", "项目"),
    "col_amount": ("Amount", "金额"),
    "tco_row_purchase": ("Purchase", "购买"),
    "tco_row_resale": ("Resale", "转售"),
    "tco_row_power": ("Power", "电费"),
    "tco_row_owning": ("Owning", "拥有合计"),
    "tco_row_renting": ("Renting", "租用合计"),
    # Price index page
    "index_intro": (
        "Price index per GPU over time, in the display currency; beneath it, how many "
        "providers each point is built from.",
        "各 GPU 的价格指数随时间的变化（显示币种）；下方为每个点所依据的平台数量。",
    ),
    "index_download": ("Download CSV", "下载 CSV"),
    "index_gpus": ("GPUs", "GPU"),
    "index_date": ("Date (UTC)", "日期 (UTC)"),
    "index_price": ("Index per GPU-hour", "每卡时指数"),
    "index_providers": ("Providers quoting", "报价平台数"),
    "index_withheld": (
        "{n} GPU-days withheld (fewer than 2 providers quoting in stock): gaps in the lines, "
        "never carried forward. Method {method}.",
        "{n} 个 GPU-日因有货报价的平台少于 2 个而不发布：线条中断，不沿用前值。方法 {method}。",
    ),
    "index_none": (
        "No GPU has an index yet: each needs at least 2 providers quoting it in stock on a day.",
        "还没有 GPU 指数：每个 GPU 每天至少需要 2 个平台有货报价。",
    ),
    # Price index page, method gpi-2 (rows per GPU, form factor, price kind and market)
    "index_method": ("Method", "方法"),
    "index_method_help": (
        "gpi-3: as gpi-2, but only offers rentable as listed (every card of the machine "
        "free) quote, and each supplier has one vote (a marketplace's re-listing votes as "
        "the cloud it re-lists). gpi-2: per GPU, form factor, price kind and market, the "
        "median of the providers' medians with its quartiles (p25, p75). gpi-1: per GPU, on "
        "demand only, a capped mean. All in docs/price-index.md.",
        "gpi-3：同 gpi-2，但只计按所列规格可租（整机的卡全部空闲）的报价，且每个供应方一票"
        "（市场平台转售的机器算作其背后的云）。gpi-2：按 GPU、规格、价格类型和市场分行，取各平台"
        "中位数的中位数及其四分位数（p25、p75）。gpi-1：按 GPU，仅按需价格，取有上限权重的均值。"
        "均见 docs/price-index.md。",
    ),
    "index_kinds": ("Price kinds", "价格类型"),
    "index_markets": ("Markets", "市场"),
    "kind_monthly": ("monthly package", "包月"),
    "market_CN": ("China", "中国"),
    "market_intl": ("international", "国际"),
    "form_unstated": ("form factor not stated", "未注明规格"),
    "col_form_factor": ("Form factor", "规格"),
    "col_price_kind": ("Price kind", "价格类型"),
    "col_market": ("Market", "市场"),
    "col_p25": ("p25", "p25（下四分位）"),
    "col_p75": ("p75", "p75（上四分位）"),
    "col_n_offers": ("Offers quoting", "报价数"),
    "col_in_stock_share": ("Share in stock", "有货比例"),
    "index_latest": ("Every row of the latest day, {day}", "最新一天（{day}）的全部行"),
    "index_withheld_v2": (
        "{n} rows withheld (fewer than {min_providers} {who} quoting in stock, or p75 "
        "above {spread} × p25): gaps in the lines, never carried forward. Method {method}.",
        "{n} 行不发布（有货报价的{who}少于 {min_providers} 个，或 p75 高于 p25 的 {spread} 倍）："
        "线条中断，不沿用前值。方法 {method}。",
    ),
    "index_none_v2": (
        "No row has an index yet: each needs at least {min_providers} {who} quoting in "
        "stock on a day, with p75 at most {spread} × p25.",
        "还没有指数：每行每天至少需要 {min_providers} 个{who}有货报价，且 p75 不高于 p25 的 "
        "{spread} 倍。",
    ),
    # What has a vote in a gpi-2 / gpi-3 row (gpurent.api.market.IndexRules.voter)
    "index_voters_provider": ("providers", "平台"),
    "index_voters_supplier": ("suppliers", "供应方"),
    # Availability page
    "avail_intro": (
        "Share of polls that found a card free, by hour of the week, per GPU and provider; "
        "then the history of one offer.",
        "按一周中的小时统计的有空闲卡的轮询比例（按 GPU 和平台）；以及单个报价的历史。",
    ),
    "avail_gpu": ("GPU", "GPU"),
    "avail_zone": ("Time zone", "时区"),
    "avail_timeline": ("Timeline of one offer", "单个报价的时间线"),
    "avail_offer": ("Offer", "报价"),
    "avail_share": ("Free share", "空闲比例"),
    "avail_hour": ("Hour", "小时"),
    "avail_day": ("Day", "星期"),
    "avail_no_polls": ("{gpu} on {provider}: no polls yet", "{gpu} 在 {provider}：还没有轮询"),
    "avail_too_few": (
        "{gpu} on {provider}: too few polls per hour to tell ({zone})",
        "{gpu} 在 {provider}：每小时的轮询太少，无法判断（{zone}）",
    ),
    "avail_any_hour": (
        "{gpu} on {provider} is usually free at any hour ({zone})",
        "{gpu} 在 {provider} 任何时段通常都有空闲（{zone}）",
    ),
    "avail_rarely": (
        "{gpu} on {provider} is rarely free: at most {best} of polls in any hour ({zone})",
        "{gpu} 在 {provider} 很少有空闲：任一小时最多 {best} 的轮询有空闲（{zone}）",
    ),
    "avail_usually": (
        "{gpu} on {provider} is usually free {hours} ({zone})",
        "{gpu} 在 {provider} 通常在 {hours} 有空闲（{zone}）",
    ),
    "avail_legend": (
        "Grey cells: fewer than {n} polls in that hour, too few to tell.",
        "灰色格：该小时的轮询少于 {n} 次，无法判断。",
    ),
    "avail_view": ("Heat map by", "热力图维度"),
    "avail_view_week": ("Hour of week", "一周中的小时"),
    "avail_view_day": ("Hour of day", "一天中的小时"),
    "avail_from": ("From (UTC)", "开始 (UTC)"),
    "avail_to": ("To (UTC)", "结束 (UTC)"),
    "avail_price_gpu_hour": ("Price per GPU-hour", "每卡时价格"),
    "avail_current": ("now", "至今"),
    "avail_restock": ("Restock forecast", "补货预测"),
    "avail_restock_all": ("All providers", "所有平台"),
    "avail_restock_line": (
        "{who}: {p1} within 1 h, {p6} within 6 h, {p24} within 24 h; expected wait {wait}, "
        "from {n} sold-out spells",
        "{who}：1 小时内 {p1}，6 小时内 {p6}，24 小时内 {p24}；预计等待 {wait}，基于 {n} 次售罄",
    ),
    "avail_restock_about": ("about {span}", "约 {span}"),
    "avail_restock_over": ("over {span}", "超过 {span}"),
    "unit_min": ("min", "分钟"),
    "unit_h": ("h", "小时"),
    "avail_restock_thin": (
        "{who}: not enough history ({n} sold-out spells; a forecast needs {min})",
        "{who}：历史不足（{n} 次售罄；预测至少需要 {min} 次）",
    ),
    "avail_restock_legend": (
        "The chance a sold-out card is rentable again, from its past sold-out spells (confirmed "
        "polls only), by provider and hour of week; each figure needs {min} spells.",
        "售罄后重新可租的概率，基于过去的售罄时段（仅计已确认的轮询），按平台和一周中的小时区分；"
        "每个数字至少需要 {min} 次售罄。",
    ),
}

WEEKDAYS: dict[Lang, tuple[str, ...]] = {
    Lang.EN: ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"),
    Lang.ZH: ("周一", "周二", "周三", "周四", "周五", "周六", "周日"),
}


def t(lang: Lang, key: str, **values: object) -> str:
    """The label ``key`` in ``lang``, with ``{name}`` placeholders filled from ``values``."""
    en, zh = LABELS[key]
    text = zh if lang is Lang.ZH else en
    return text.format(**values) if values else text


def status_label(lang: Lang, status: str | None) -> str:
    """A stock status (in_stock, low, ...) in words; unexpected values are shown as they are."""
    key = f"status_{status}"
    return t(lang, key) if key in LABELS else str(status or "")


def run_status_label(lang: Lang, status: str | None) -> str:
    return enum_label(lang, "run", status)


def enum_label(lang: Lang, prefix: str, value: str | None) -> str:
    """A stored enum value (``unit``/``basis``/``kind``/``run``) in words, else as is."""
    key = f"{prefix}_{value}"
    return t(lang, key) if key in LABELS else str(value or "")


def currency_symbol(currency: str) -> str:
    return CURRENCY_SYMBOLS.get(currency.upper(), f"{currency.upper()} ")


_CENT = Decimal("0.01")


def money(value: Decimal | int | None, currency: str) -> str:
    """``¥1,234.56`` / ``$2.49``: two decimals, half-even, exact (Decimal in, never float)."""
    if value is None:
        return ""
    if isinstance(value, float):  # a float here is a bug upstream: money is Decimal
        raise TypeError(f"money must be Decimal, got float {value!r}")
    amount = Decimal(value).quantize(_CENT, rounding=ROUND_HALF_EVEN)
    sign = "-" if amount < 0 else ""
    return f"{sign}{currency_symbol(currency)}{abs(amount):,.2f}"


def human_age(lang: Lang, then: datetime | None, now: datetime) -> str:
    """``3h ago`` / ``3小时前``; empty for no time at all."""
    if then is None:
        return t(lang, "never")
    return t(lang, "age_ago", age=duration(lang, now - then))


def duration(lang: Lang, span: timedelta) -> str:
    seconds = max(0, int(span.total_seconds()))
    units = (
        (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))
        if lang is Lang.EN
        else (("天", 86400), ("小时", 3600), ("分钟", 60), ("秒", 1))
    )
    for unit, size in units:
        if seconds >= size or size == 1:
            return f"{seconds // size}{unit}"
    return ""  # unreachable: the last unit always matches


# --- billing facts: the typed facts in the page's language ---------------------------------


def fact_label(lang: Lang, kind: str) -> str:
    """A checklist question: the stored key in English (as `gpurent providers --details`
    names it), words in Chinese."""
    return enum_label(lang, "fact", kind)


def span_text(lang: Lang, seconds: int) -> str:
    """A billing duration in its largest whole unit: "1 min" / "1 分钟" (English as the CLI
    writes it, ``gpurent_core.billing_facts.duration_text``)."""
    from gpurent_core.billing_facts import duration_text

    if lang is Lang.EN:
        return duration_text(seconds)
    for size, unit in ((3600, "小时"), (60, "分钟")):
        if seconds and seconds % size == 0:
            return f"{seconds // size} {unit}"
    return f"{seconds} 秒"


def used_in_cost(lang: Lang, fact: object) -> str:
    """How the cost engine uses a billing fact (``BillingFact.used_in_cost``), in ``lang``:
    made from the fact's typed terms (seconds, start, fees), never by translating words."""
    from gpurent_core.billing_facts import BillingFact, BillingFactKind, BillingStart

    if not isinstance(fact, BillingFact):
        return ""
    if fact.seconds is not None:
        if fact.fact is BillingFactKind.BILLING_GRANULARITY:
            return t(lang, "used_rounds", span=span_text(lang, fact.seconds))
        if fact.seconds == 0:
            return t(lang, "used_no_minimum")
        return t(lang, "used_minimum", span=span_text(lang, fact.seconds))
    if fact.starts is not None:
        billed = fact.starts is BillingStart.POWER_ON
        return t(lang, "used_boot_billed" if billed else "used_boot_free")
    separator = "; " if lang is Lang.EN else "；"
    return separator.join(_fee_text(lang, fee) for fee in fact.fees)


def _stopped_text(lang: Lang, fee: object) -> str:
    """Whether a timed fee runs on while the machine is stopped; unknown is said, not hidden
    (the engine counts it as charged). A one-off fee (no unit) has no stopped hours."""
    from gpurent_core.terms import FeeTerms

    assert isinstance(fee, FeeTerms)
    if fee.unit is None or fee.charged_while_stopped is False:
        return ""
    key = "used_fee_stopped" if fee.charged_while_stopped else "used_fee_stopped_unknown"
    return t(lang, key)


def _fee_text(lang: Lang, fee: object) -> str:
    from gpurent_core.terms import FeeTerms

    assert isinstance(fee, FeeTerms)
    free = fee.included_quantity
    return t(
        lang,
        "used_fee",
        fee=enum_label(lang, "fee", fee.fee_type.value),
        amount=f"{fee.amount:f}",
        currency=fee.currency,
        per=f"/{enum_label(lang, 'unit', fee.unit.value)}" if fee.unit else "",
        basis=enum_label(lang, "feebasis", fee.basis.value),
        free=t(lang, "used_fee_free", n=f"{free:f}") if free is not None else "",
        kind=t(lang, "used_fee_mandatory" if fee.mandatory else "used_fee_optional"),
        stopped=_stopped_text(lang, fee),
    )
