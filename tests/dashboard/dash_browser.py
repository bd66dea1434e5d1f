"""Driving the dashboard in headless Chromium: start it, wait for Streamlit, check a page.

A module with a unique name (not conftest) so the browser test modules can import it.
Waits are generous: the suite runs on a shared two-core machine where a Streamlit rerun
can take seconds.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from playwright.sync_api import ConsoleMessage, Dialog, Page, ViewportSize
from playwright.sync_api import Error as PlaywrightError

from gpurent.cli.dashboard import streamlit_command

REPO_ROOT = Path(__file__).resolve().parents[2]
# A test run writes its screenshots to a scratch folder: a clone's tracked files stay as they
# were. GPURENT_SCREENSHOTS=docs/screenshots refreshes the ones docs/dashboard.md shows.
SCREENSHOTS = Path(
    os.environ.get("GPURENT_SCREENSHOTS") or Path(tempfile.gettempdir()) / "gpurent-screenshots"
)
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
START_TIMEOUT_S = 180
RERUN_TIMEOUT_MS = 120_000
VIEWPORT = ViewportSize(width=1400, height=1000)

# Pages as the sidebar names them (English), with their screenshot names.
PAGES = {
    "now": "Now",
    "size": "Size my workload",
    "index": "Price index",
    "availability": "Availability",
    "providers": "Providers",
}


def chromium_path() -> str | None:
    return os.environ.get("GPURENT_CHROMIUM") or shutil.which("chromium")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def running_dashboard(db: Path, log: Path) -> Iterator[str]:
    """The dashboard (as `gpurent dashboard` starts it) on a free port; yields its URL."""
    port = free_port()
    env = {**os.environ, "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
    with log.open("wb") as out:
        proc = subprocess.Popen(
            streamlit_command(port, db),
            cwd=REPO_ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_healthy(url, proc, log)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=20)


def _wait_healthy(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"dashboard exited ({proc.returncode}):\n{log.read_text()}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=5) as resp:
                if resp.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise TimeoutError(f"dashboard did not answer within {START_TIMEOUT_S}s:\n{log.read_text()}")


@dataclass
class Watch:
    """What the page did that it should not: console errors, dialogs (an alert would land
    here), failed app requests."""

    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def attach(self, page: Page) -> None:
        page.on("console", self._console)
        page.on("dialog", self._dialog)
        page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))

    def _console(self, msg: ConsoleMessage) -> None:
        if msg.type == "error":
            self.errors.append(msg.text)

    def _dialog(self, dialog: Dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()


def wait_idle(page: Page) -> None:
    """Until Streamlit has finished the current run: no "running" widget, nothing stale."""
    page.wait_for_selector('[data-testid="stMainBlockContainer"] h1', timeout=RERUN_TIMEOUT_MS)
    # A rerun starts a moment after the interaction that caused it.
    page.wait_for_timeout(400)
    page.wait_for_function(
        """() => !document.querySelector('[data-testid="stStatusWidget"]')
                 && !document.querySelector('[data-stale="true"]')""",
        timeout=RERUN_TIMEOUT_MS,
        polling=200,
    )


def open_page(page: Page, base_url: str, name: str) -> None:
    """Load the app and follow its sidebar link to ``name`` (a key of PAGES), as a user would.

    Deep links (``/providers``) work too, but make Streamlit probe ``/providers/_stcore/...``
    first, which logs 404s that are Streamlit's, not the app's.
    """
    page.goto(base_url)
    wait_idle(page)
    if name != "now":
        page.locator('[data-testid="stSidebarNav"] a').filter(has_text=PAGES[name]).click()
        page.wait_for_function(
            "t => document.querySelector('[data-testid=\"stMainBlockContainer\"] h1')"
            "?.innerText.trim() === t",
            arg=PAGES[name],
            timeout=RERUN_TIMEOUT_MS,
        )
    wait_idle(page)


def main_text(page: Page) -> str:
    return page.locator('[data-testid="stMainBlockContainer"]').inner_text()


def assert_shows(page: Page, *needles: str) -> None:
    """The main block shows every one of ``needles``, waiting for them: on a busy machine a
    page's body can arrive after its title and after ``wait_idle`` has seen no run going
    (Streamlit shows its running widget only a moment into a run)."""
    # On a timeout the assertion below says what is missing, with the page's text.
    with contextlib.suppress(PlaywrightError):
        page.wait_for_function(
            """needles => {
                const main = document.querySelector('[data-testid="stMainBlockContainer"]');
                return !!main && needles.every(n => main.innerText.includes(n));
            }""",
            arg=list(needles),
            timeout=RERUN_TIMEOUT_MS,
            polling=200,
        )
    text = main_text(page)
    missing = [n for n in needles if n not in text]
    assert not missing, f"{missing} not on the page:\n{text}"


def table_cells(page: Page, index: int = 0) -> list[list[str]]:
    """Rows of the ``index``-th st.dataframe, read from the grid's accessibility table.

    The grid draws on a canvas; Glide Data Grid mirrors the visible rows in a hidden
    ``table[role=grid]`` for screen readers, which is what people with assistive tech get.
    It fills in a moment after the element appears: use ``cells_when`` to wait for it.
    """
    grid = page.locator('[data-testid="stDataFrame"]').nth(index).locator('table[role="grid"]')
    rows = []
    for row in grid.locator("tbody tr").all():
        rows.append([c.strip() for c in row.locator("td").all_inner_texts()])
    return rows


def cells_when(
    page: Page,
    check: Callable[[list[list[str]]], bool],
    index: int = 0,
    timeout_s: float = RERUN_TIMEOUT_MS / 1000,
) -> list[list[str]]:
    """``table_cells`` once ``check`` holds for them (the grid redraws after a rerun)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            rows = table_cells(page, index)
        except PlaywrightError:  # the grid was replaced while being read
            rows = []
        if check(rows):
            return rows
        if time.monotonic() > deadline:
            raise AssertionError(f"table never satisfied the check; last rows: {rows}")
        page.wait_for_timeout(250)


def choose(page: Page, label: str, option: str) -> None:
    """Pick ``option`` in the select box labelled ``label`` and wait for the rerun."""
    box = page.get_by_role("combobox", name=label)
    box.click()
    box.fill(option)  # the list is virtualised: filter it so the option is drawn
    page.get_by_role("option", name=option, exact=True).click()
    # While the list is open, react-aria hides the rest of the page from the accessibility
    # tree (so get_by_role finds nothing there): wait until it has closed.
    listbox = page.get_by_role("listbox")
    try:
        listbox.wait_for(state="hidden", timeout=10_000)
    except PlaywrightError:
        page.keyboard.press("Escape")
        listbox.wait_for(state="hidden", timeout=10_000)
    wait_idle(page)


def assert_clean(page: Page, watch: Watch) -> None:
    """No Streamlit exception block, no error notice, no console error, no dialog."""
    assert page.locator('[data-testid="stException"]').count() == 0, main_text(page)
    assert page.locator('[data-testid="stAlertContentError"]').count() == 0, main_text(page)
    assert watch.errors == [], watch.errors
    assert watch.dialogs == [], watch.dialogs


def assert_inert(page: Page, watch: Watch, hostile: str) -> None:
    """Hostile text shown as text: no alert fired, no element it would have created."""
    assert watch.dialogs == []
    injected = page.evaluate(
        """() => ({
            scripts: [...document.querySelectorAll('script')]
                .filter(s => s.textContent.includes('alert(1)')).length,
            bold: [...document.querySelectorAll('b, strong')]
                .filter(b => b.textContent.trim() === 'bold').length,
        })"""
    )
    assert injected == {"scripts": 0, "bold": 0}, injected
    assert hostile in page.locator("body").inner_text()


def screenshot(page: Page, name: str) -> Path:
    """The whole page (Streamlit scrolls inside stMain, so grow the viewport to fit)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    height = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size(
        ViewportSize(width=VIEWPORT["width"], height=max(VIEWPORT["height"], int(height)))
    )
    wait_idle(page)
    page.wait_for_timeout(500)  # charts re-layout after the resize
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    page.set_viewport_size(VIEWPORT)
    return path
