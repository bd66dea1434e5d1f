"""Watch test kit: provider runs loaded into a real warehouse, a webhook receiver, the CLI.

A module with a unique name (not conftest) so test modules can import it directly.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import duckdb
import typer
from typer.testing import CliRunner

from gpurent.cli import app as cli_app
from gpurent_core.model import (
    AddonFee,
    BillingUnit,
    FeeBasis,
    FeeType,
    OfferRecord,
    PriceBasis,
    ProviderRun,
    RunStatus,
    StockStatus,
)
from warehouse.load import load_run

T0 = datetime(2026, 11, 1, 8, 0, tzinfo=UTC)


class Market:
    """Loads one provider's polls into a warehouse: poll n starts n minutes after ``start``."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        feeds: Path,
        *,
        provider: str = "acme",
        start: datetime = T0,
    ) -> None:
        self.con = con
        self.feeds = feeds
        self.provider = provider
        self.start = start
        self.n = 0

    def offer(self, key: str = "h1", **changes: Any) -> dict[str, Any]:
        """Fields of one offer (an RTX 4090 per-card offer in CNY, 3 free) with changes."""
        fields: dict[str, Any] = {
            "offer_key": key,
            "gpu_vendor": "NVIDIA",
            "gpu_model": "RTX 4090",
            "gpu_vram_gb": 24,
            "gpu_count": 1,
            "raw_gpu_name": "RTX 4090",
            "status": StockStatus.IN_STOCK,
            "available_count": 3,
            "price": Decimal("1.98"),
            "currency": "CNY",
            "billing_unit": BillingUnit.HOUR,
            "price_basis": PriceBasis.GPU,
            "region": "西北B区",
            "url": "https://example.test/market",
            "fees": (
                AddonFee(
                    fee_type=FeeType.DATA_DISK,
                    amount=Decimal("0.0000666"),
                    currency="CNY",
                    unit=BillingUnit.HOUR,
                    basis=FeeBasis.GB,
                    included_quantity=Decimal("50"),
                    mandatory=True,
                    charged_while_stopped=True,
                ),
            ),
        }
        fields.update(changes)
        return fields

    def poll(
        self,
        offers: Iterable[dict[str, Any]] = (),
        status: RunStatus = RunStatus.OK,
        *,
        at: datetime | None = None,
        **scope: Any,
    ) -> ProviderRun:
        """Load one run of the provider with these offers (and this status); ``scope``: the
        ProviderRun fields of what it could not read (``unread_keys=("h1",)``: h1's item was
        quarantined with its key, so h1 stays, stale) or where it lists only capacity
        (``sold_out_unlisted``)."""
        self.n += 1
        started = at or self.start + timedelta(minutes=self.n)
        run = ProviderRun(
            run_id=f"{self.provider}-run-{self.n}",
            provider=self.provider,
            started_at=started,
            finished_at=started + timedelta(seconds=20),
            status=status,
            **scope,
        )
        records = [
            OfferRecord(
                provider=self.provider,
                run_id=run.run_id,
                observed_at=started + timedelta(seconds=5),
                **o,
            )
            for o in offers
        ]
        path = self.feeds / f"{run.run_id}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8")
        load_run(self.con, run, path if records else None)
        return run


@dataclass
class Receiver:
    """A JSON webhook on 127.0.0.1 that records every POST (apprise's ``json://`` target)."""

    port: int = 0
    status: int = 200
    posts: list[dict[str, Any]] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                with receiver._lock:
                    receiver.posts.append(
                        {
                            "path": self.path,
                            "headers": dict(self.headers.items()),
                            "json": json.loads(raw or b"null"),
                            "at": datetime.now(UTC),
                        }
                    )
                self.send_response(receiver.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        server.daemon_threads = True
        self.port = int(server.server_address[1])
        self._server = server
        threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def url(self) -> str:
        return f"json://127.0.0.1:{self.port}/hook"

    def received(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.posts)


@contextmanager
def receiving(port: int = 0) -> Iterator[Receiver]:
    receiver = Receiver(port=port).start()
    try:
        yield receiver
    finally:
        receiver.stop()


def free_port() -> int:
    """A loopback port nothing listens on (for a receiver that is down)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def build_cli() -> typer.Typer:
    """The gpurent app (with the watch and schedule commands)."""
    return cli_app.build_app()


def cli(*args: str, code: int = 0) -> Any:
    """Run ``gpurent ARGS`` in-process and check its exit code."""
    result = CliRunner().invoke(build_cli(), cli_app.expand_optional_values(list(args)))
    if result.exit_code != code:
        raise AssertionError(
            f"gpurent {' '.join(args)} exited {result.exit_code} (wanted {code})\n"
            f"{result.output}\n{result.exception!r}"
        )
    return result


def cli_json(*args: str) -> Any:
    return json.loads(cli(*args, "--format", "json").stdout)


def outbox(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    from warehouse.watch.outbox import outbox_rows

    return outbox_rows(con, limit=None).sort("notification_id").to_dicts()


def states(con: duckdb.DuckDBPyConnection) -> dict[tuple[int, str, str], str]:
    rows = con.execute(
        "SELECT watch_id, provider, offer_key, phase FROM watch_offer_states"
    ).fetchall()
    return {(int(w), str(p), str(k)): str(ph) for w, p, k, ph in rows}
