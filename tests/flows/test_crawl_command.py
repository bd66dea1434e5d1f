"""The `scrapy crawl` line a crawl runs: polite towards real providers, quick on a replay."""

from __future__ import annotations

from pathlib import Path

from flows.crawl import CrawlSpec, crawl_command


def settings_of(cmd: list[str]) -> dict[str, str]:
    pairs = [cmd[i + 1] for i, arg in enumerate(cmd) if arg == "-s"]
    return dict(pair.split("=", 1) for pair in pairs)


def test_a_real_provider_keeps_the_polite_first_delay(tmp_path: Path) -> None:
    cmd, feed, report, _ = crawl_command(CrawlSpec("vastai", "r1", tmp_path))
    settings = settings_of(cmd)
    assert "AUTOTHROTTLE_START_DELAY" not in settings and "GPURENT_BASE_URL" not in settings
    assert settings["GPURENT_RUN_REPORT"] == str(report)
    assert cmd[cmd.index("-O") + 1] == str(feed) == str(tmp_path / "r1" / "vastai.jsonl")


def test_a_replay_server_is_read_without_waiting(tmp_path: Path) -> None:
    spec = CrawlSpec("vastai", "r1", tmp_path, base_url="http://127.0.0.1:9/vastai")
    settings = settings_of(crawl_command(spec)[0])
    assert settings["GPURENT_BASE_URL"] == "http://127.0.0.1:9/vastai"
    assert settings["AUTOTHROTTLE_START_DELAY"] == "0"
