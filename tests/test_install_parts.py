"""gpurent in parts: the one list of providers, and the library and the CLI's questions working
with none of the optional parts installed (no Scrapy, Playwright, Prefect, Streamlit).

"Not installed" is made real in a child process: a finder placed first on ``sys.meta_path``
answers for those packages with a module that cannot load, exactly what an import of a
package that is not there raises (``ModuleNotFoundError`` naming it).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
from decimal import Decimal
from pathlib import Path

import pytest
from scrapy.settings import Settings
from scrapy.spiderloader import SpiderLoader

from gpurent.cli.dashboard import dashboard
from gpurent.cli.errors import PART_OF_PACKAGE, explain
from gpurent_core.model import PriceBasis
from gpurent_core.providers import BY_NAME, PROVIDERS
from spiders.base import ProviderSpider
from tests.warehouse.wh_kit import FeedKit
from warehouse.db import writing
from warehouse.load import load_run

OPTIONAL = sorted({*PART_OF_PACKAGE, "altair"})

_WITHOUT_OPTIONAL_PARTS = textwrap.dedent(
    f"""
    import importlib.abc, importlib.machinery, sys
    ABSENT = {OPTIONAL!r}

    class _CannotLoad(importlib.abc.Loader):
        def create_module(self, spec):
            return None

        def exec_module(self, module):
            raise ModuleNotFoundError(f"No module named {{module.__name__!r}}", name=module.__name__)

    class _Absent(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name.split(".")[0] in ABSENT:
                return importlib.machinery.ModuleSpec(name, _CannotLoad())
            return None

    sys.meta_path.insert(0, _Absent())
    """
)


def run_without_parts(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _WITHOUT_OPTIONAL_PARTS + textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=Path(__file__).resolve().parents[1],
    )


def test_the_spiders_are_exactly_the_registered_providers_with_their_facts() -> None:
    loader = SpiderLoader.from_settings(Settings({"SPIDER_MODULES": ["spiders.providers"]}))
    assert sorted(loader.list()) == sorted(BY_NAME) and len(PROVIDERS) == len(BY_NAME)
    for name in loader.list():
        spider, info = loader.load(name), BY_NAME[name]
        assert (spider.home, spider.auth_env, spider.default_base_url) == (
            info.home,
            info.auth_env,
            info.default_base_url,
        ), name
        assert spider.needs_browser == info.needs_browser, name


def test_a_spider_that_contradicts_its_registry_line_is_refused() -> None:
    with pytest.raises(TypeError, match="needs_browser"):

        class _NoBrowserGongji(ProviderSpider):  # gongji's page needs the browser
            name = "gongji"


def test_a_missing_optional_package_is_said_in_one_line_with_what_to_install() -> None:
    message, code = explain(ModuleNotFoundError("No module named 'prefect'", name="prefect"))
    assert code == 2 and "pip install 'gpurent[crawl]'" in message and "\n" not in message
    message, _ = explain(ModuleNotFoundError("No module named 'streamlit'", name="streamlit"))
    assert "gpurent[dashboard]" in message
    # A module of gpurent itself missing is a bug, not a part to install.
    assert "pip install" not in explain(ModuleNotFoundError("x", name="warehouse.nope"))[0]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("parts")
    kit = FeedKit(root)
    path = root / "gpurent.duckdb"
    with writing(path) as con:
        run = kit.run(1, provider="lambda")
        offer = kit.offer(run, "gpu_1x_h100", price_basis=PriceBasis.INSTANCE, plans=())
        load_run(con, run, kit.write("l", [offer]))
    return path


def test_the_library_answers_without_the_optional_parts(db: Path) -> None:
    done = run_without_parts(
        """
        import json, sys
        from gpurent import api
        db = sys.argv[1]
        rows = api.cheapest(40, db=db)
        answer = {
            "cheapest": [(o.provider, o.offer_key, str(o.true_monthly)) for o in rows],
            "providers": len(api.providers(db=db)),
            "explain": api.explain(rows[0].offer_id, db=db).text().splitlines()[0],
            "size": type(api.size("llama-3.1-8b", db=db)).__name__,
            "loaded": sorted(m for m in sys.modules if m.split(".")[0] in ("scrapy", "prefect")),
        }
        print(json.dumps(answer))
        """,
        str(db),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    answer = json.loads(done.stdout)
    ((provider, key, monthly),) = answer["cheapest"]
    assert (provider, key) == ("lambda", "gpu_1x_h100") and Decimal(monthly) > 0
    assert answer["providers"] == len(PROVIDERS)
    assert answer["explain"].startswith("Profile:")
    assert answer["size"] == "SizeAnswer" and answer["loaded"] == []


def test_the_cli_answers_without_the_optional_parts_and_refuses_a_crawl_in_one_line(
    db: Path,
) -> None:
    main = "import sys\nfrom gpurent.cli.app import main\nsys.argv = ['gpurent', *sys.argv[1:]]\nmain()"
    cheapest = run_without_parts(main, "cheapest", "--min-vram", "40", "--db", str(db))
    assert cheapest.returncode == 0, cheapest.stderr[-2000:]
    assert "gpu_1x_h100" in run_without_parts(main, "offers", "--db", str(db), "-f", "json").stdout
    crawl = run_without_parts(main, "crawl", "--replay", "--db", str(db))
    assert crawl.returncode == 2
    assert (
        crawl.stderr.strip().splitlines() == [crawl.stderr.strip()]
        and "pip install 'gpurent[crawl]'" in crawl.stderr
    )


def test_the_dashboard_without_its_part_is_refused_before_anything_starts(
    monkeypatch: pytest.MonkeyPatch, db: Path
) -> None:
    # find_spec is what the command asks (the child-process trick above answers it with a
    # spec, so the refusal is checked here, in process, where nothing can start).
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "streamlit" else real(name, *a),
    )
    with pytest.raises(ModuleNotFoundError) as refused:
        dashboard(db=db)
    assert "gpurent[dashboard]" in explain(refused.value)[0]
