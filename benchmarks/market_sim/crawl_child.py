"""One poll's crawls in ONE Scrapy process: ``python -m benchmarks.market_sim.crawl_child SPEC``.

``SPEC`` is a JSON file ``{"run_id", "log", "crawls": [{"provider", "base_url", "feed",
"report"}, ...]}``. Each provider gets its own crawler, with the settings ``flows.crawl``
passes to a ``scrapy crawl`` process (its feed, ``GPURENT_RUN_ID``, ``GPURENT_RUN_REPORT``,
``GPURENT_BASE_URL``), so each writes its own feed and run report exactly as the flow's
processes do; they share the reactor and one log file. The spiders are found by name
through the project's settings (``SCRAPY_SETTINGS_MODULE``), as ``scrapy crawl`` finds them.

Ten crawls cost one interpreter and one Scrapy start-up instead of ten: on a two-core
machine a poll of ten providers takes about 4 s this way against about 25 s as ten
processes (``benchmarks.market_over_time --crawl processes`` runs the latter).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

CMDLINE = "cmdline"
"""The priority of ``scrapy crawl -s``: above the project's, as the flow's settings are."""


def crawl(spec: dict[str, Any]) -> None:
    os.environ.setdefault("SCRAPY_SETTINGS_MODULE", "spiders.settings")
    from scrapy.crawler import CrawlerProcess
    from scrapy.utils.project import get_project_settings

    settings = get_project_settings()
    settings.set("LOG_FILE", spec["log"], priority=CMDLINE)
    settings.set("LOG_LEVEL", spec.get("log_level", "INFO"), priority=CMDLINE)
    process = CrawlerProcess(settings)
    for entry in spec["crawls"]:
        crawler = process.create_crawler(process.spider_loader.load(entry["provider"]))
        own = {
            "GPURENT_RUN_ID": spec["run_id"],
            "GPURENT_RUN_REPORT": entry["report"],
            "GPURENT_BASE_URL": entry["base_url"],
            # Replay answers in milliseconds; the polite first delay only slows the poll
            # (the crawl tests set the same).
            "AUTOTHROTTLE_START_DELAY": 0,
            "FEEDS": {entry["feed"]: {"format": "jsonlines", "overwrite": True}},
        }
        for name, value in own.items():
            crawler.settings.set(name, value, priority=CMDLINE)
        process.crawl(crawler)
    process.start()


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    crawl(json.loads(Path(args[0]).read_text(encoding="utf-8")))


if __name__ == "__main__":
    main()
