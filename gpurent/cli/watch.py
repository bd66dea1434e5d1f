"""`gpurent watch ...`: watches (add, list, remove, test), one poll by hand, the outbox."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from gpurent.cli.common import (
    DbOption,
    FormatOption,
    ReplayOption,
    SceneOption,
    StepOption,
    normalise_currency,
    reader,
    require_db,
    settings,
    writable_db,
)
from gpurent.cli.crawl import PREFECT_DEFAULTS
from gpurent.cli.errors import refuse
from gpurent.cli.output import OutputFormat, render, to_jsonable

if TYPE_CHECKING:
    import duckdb

LIST_COLUMNS = [
    "id", "gpu", "form_factor", "min_vram_gb", "count", "max_price", "providers", "regions",
    "include_spot", "notify", "created_at", "expected_wait",
]  # fmt: skip
POLL_COLUMNS = ["provider", "action", "status", "offers", "message"]
TABLE_LIST_COLUMNS = ["id", "watch", "notify", "created_at", "expected_wait"]

watch_app = typer.Typer(
    help="Watch for a card: get a notification (DingTalk, WeCom, Feishu, Telegram, email, "
    "ntfy, a JSON webhook...) when it frees up or drops under your price.",
    no_args_is_help=True,
)


@contextmanager
def _writer(db: Path | None) -> Iterator[duckdb.DuckDBPyConnection]:
    from warehouse.db import writing

    with writing(writable_db(db)) as con:
        yield con


@contextmanager
def _reader(db: Path | None) -> Iterator[duckdb.DuckDBPyConnection]:
    from warehouse.db import fetch_one

    with reader(db) as con:
        found = fetch_one(
            con, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'outbox'"
        )
        if not found or not found[0]:
            # Readers do not migrate; a database last written by an older gpurent has no
            # watch tables until a writer (a crawl, `watch add`) opens it.
            typer.secho("No watches yet (this database predates watches).", err=True)
            raise typer.Exit(0)
        yield con


def _watch_row(watch: Any) -> dict[str, Any]:
    from gpurent_core.notify import mask_url

    return {
        "id": watch.watch_id,
        "gpu": watch.gpu_model,
        "form_factor": watch.gpu_form_factor,
        "min_vram_gb": watch.min_vram_gb,
        "count": watch.gpu_count,
        "max_price": watch.cap_text(),
        "providers": ", ".join(watch.providers),
        "regions": ", ".join(watch.regions),
        "include_spot": watch.include_spot,
        "notify": " ".join(mask_url(u) for u in watch.notify_urls),
        "created_at": watch.created_at,
    }


def _render_watches(
    watches: list[Any],
    fmt: OutputFormat,
    *,
    title: str,
    empty_message: str = "",
    waits: dict[int, str] | None = None,
) -> None:
    rows = [_watch_row(w) | {"expected_wait": (waits or {}).get(w.watch_id)} for w in watches]
    columns = LIST_COLUMNS
    if fmt is OutputFormat.TABLE:  # one readable line per watch; JSON and CSV keep every field
        rows = [r | {"watch": w.describe()} for r, w in zip(rows, watches, strict=True)]
        columns = TABLE_LIST_COLUMNS
    render(rows, fmt, columns=columns, title=title, empty_message=empty_message)


def _resolve_gpu(
    gpu: str | None, min_vram: int | None
) -> tuple[str | None, int | None, str | None]:
    """The watch's model, minimum VRAM and form factor: the name read as `offers` reads
    it, with close names suggested for an unknown one (``gpurent.api.names.read_gpu``).
    The form factor is kept where the name pins one down that the model leaves open
    ("H100 SXM"): the watch then alerts only on offers that say SXM."""
    if gpu is None:
        largest = max((sku.vram_gb for sku in _catalog().all() if sku.vram_gb), default=0)
        if min_vram is not None and largest and min_vram > largest:
            raise typer.BadParameter(
                f"no card has {min_vram} GB: the catalog's largest has {largest} GB",
                param_hint="--min-vram",
            )
        return None, min_vram, None
    from gpurent.api.names import read_gpu
    from gpurent.cli.api_errors import as_usage_errors

    with as_usage_errors():
        name = read_gpu(gpu)
    # "A100 80GB" names a size: watch that size unless --min-vram says otherwise.
    vram = min_vram if min_vram is not None else name.identity.vram_gb
    sizes = _catalog_sizes(name.model)
    if min_vram is not None and sizes and min_vram > max(sizes):
        # A watch that can never fire waits for ever: "RTX 4090 >= 80 GB" is no card.
        raise typer.BadParameter(
            f"no {name.model} has {min_vram} GB (the catalog's: "
            f"{', '.join(f'{s} GB' for s in sorted(sizes))})",
            param_hint="--min-vram",
        )
    return name.model, vram, name.form_factor


def _catalog() -> Any:
    from gpurent_core.catalog.gpus import get_catalog

    return get_catalog()


def _catalog_sizes(model: str) -> set[int]:
    return {sku.vram_gb for sku in _catalog().variants(model) if sku.vram_gb}


OUTBOX_STATUSES = ("pending", "sent", "cancelled", "expired")
MAX_CAP = 10**9
"""A price cap at or past this is a typo (the watches table stores DECIMAL(18,8))."""


def _price_cap(
    max_price: str | None, currency: str | None, per: str | None, count: int
) -> tuple[Decimal | None, str | None, Any]:
    """The cap as stored: for the whole rental of ``count`` cards (``CapUnit.stored``)."""
    from warehouse.watch.criteria import CapUnit

    if max_price is None:
        if currency is not None or per is not None:
            raise typer.BadParameter("--currency and --per go with --max-price")
        return None, None, None
    try:
        value = Decimal(max_price)
    except InvalidOperation as exc:
        raise typer.BadParameter(
            f"{max_price!r} is not a number", param_hint="--max-price"
        ) from exc
    if not value.is_finite() or value <= 0:
        raise typer.BadParameter("must be a positive number", param_hint="--max-price")
    if value >= MAX_CAP:  # the stored DECIMAL(18,8) holds less (a raw CHECK error before)
        raise typer.BadParameter(f"must be below {MAX_CAP:,}", param_hint="--max-price")
    code = normalise_currency(currency) or settings().currency
    try:
        unit = CapUnit.parse(per or CapUnit.CARD_HOUR.value)
    except ValueError as exc:
        raise typer.BadParameter(
            "card-hour (or hour), offer-hour, card-month (or month) or offer-month",
            param_hint="--per",
        ) from exc
    stored, price_per = unit.stored(value, count)
    return stored, code, price_per


def _destinations(urls: list[str], configs: list[Path]) -> list[str]:
    """The destinations to store, checked: apprise reads each, none holds a literal secret
    (refused, rule of truth 8: the warehouse never stores one), config files exist."""
    from gpurent_core.notify import (
        NotifyError,
        config_readable_by_others,
        config_ref,
        literal_secrets,
        mask_url,
        validate_url,
    )

    if not urls and not configs:
        raise typer.BadParameter("give --notify URL or --notify-config FILE (repeatable)")
    for url in urls:
        if url.startswith("apprise-config://"):
            raise typer.BadParameter(
                "use --notify-config FILE for a config file", param_hint="--notify"
            )
        try:
            validate_url(url)
        except NotifyError as exc:
            raise typer.BadParameter(f"{mask_url(url)}: {exc}", param_hint="--notify") from exc
        found = literal_secrets(url)
        if found:
            raise typer.BadParameter(
                f"{mask_url(url)} has {' and '.join(found)} written out; secrets are never "
                "stored: write it as ${NAME} and set NAME in the environment (e.g. "
                "tgram://${TG_BOT_TOKEN}/CHAT_ID), or use --notify-config FILE",
                param_hint="--notify",
            )
    refs = []
    for path in configs:
        ref = config_ref(path)
        try:
            validate_url(ref)
        except NotifyError as exc:
            raise typer.BadParameter(str(exc), param_hint="--notify-config") from exc
        if config_readable_by_others(path.expanduser()):
            typer.secho(
                f"note: {path} is readable by other users; its secrets are only as safe as "
                "the file (chmod 600 it).",
                err=True,
                fg="yellow",
            )
        refs.append(ref)
    return [*urls, *refs]


def _run_poll(**kwargs: Any) -> dict[str, Any]:
    import os

    for key, value in PREFECT_DEFAULTS.items():
        os.environ.setdefault(key, value)
    from flows.watch import watch_poll

    result: dict[str, Any] = watch_poll(**kwargs)
    return result


@watch_app.command("add")
def add(
    notify: Annotated[
        list[str] | None,
        typer.Option(
            "--notify",
            help="Apprise URL to notify (repeatable), e.g. json://host:port/path, "
            "dingtalk://${DINGTALK_TOKEN}, tgram://${TG_BOT_TOKEN}/CHAT_ID, ntfy://topic. "
            "Secrets (passwords, tokens, keys) must be written as ${ENV_VAR}, read from the "
            "environment when sending: a URL with a literal secret is refused, because the "
            "warehouse never stores one.",
        ),
    ] = None,
    notify_config: Annotated[
        list[Path] | None,
        typer.Option(
            "--notify-config",
            help="An apprise configuration file (YAML or text) with the URLs to notify, "
            "secrets included (repeatable). Only its path is stored; it is read when sending.",
            show_default=False,
        ),
    ] = None,
    gpu: Annotated[
        str | None,
        typer.Option(
            "--gpu",
            help="GPU model, read as a provider's name is ('4090', 'RTX 4090', 'A100 80G', "
            "'H100 SXM'; see `gpurent gpus`). A form factor named keeps only offers that say "
            "it.",
        ),
    ] = None,
    min_vram: Annotated[
        int | None, typer.Option("--min-vram", min=1, help="Minimum VRAM per card, GB.")
    ] = None,
    count: Annotated[int, typer.Option("--count", min=1, help="Cards you need at once.")] = 1,
    max_price: Annotated[
        str | None,
        typer.Option(
            "--max-price",
            help="Only offers whose TRUE price (add-ons included, always on, 50 GB kept) for "
            "the --count cards you need is at most this, per --per, in --currency (offers in "
            "other currencies are converted through the FX table); an in-stock offer "
            "dropping under it alerts too.",
        ),
    ] = None,
    currency: Annotated[
        str | None, typer.Option("--currency", help="Currency of --max-price (default: CNY).")
    ] = None,
    per: Annotated[
        str | None,
        typer.Option(
            "--per",
            help="What --max-price is per. card-hour (default; 'hour' for short): per card "
            "you need, per hour, as providers quote (--count 2 --max-price 2.5 accepts up to "
            "5 an hour for both cards). offer-hour: everything rented for your cards, per "
            "hour. card-month ('month') and offer-month: the same for a month (730 h, "
            "cheapest plan). An offer rented whole (8 cards when you need 2) counts the "
            "whole machine.",
        ),
    ] = None,
    provider: Annotated[
        list[str] | None, typer.Option("--provider", "-p", help="Only this provider (repeatable).")
    ] = None,
    region: Annotated[
        list[str] | None,
        typer.Option("--region", help="Only regions containing this text (repeatable)."),
    ] = None,
    include_spot: Annotated[
        bool,
        typer.Option(
            "--include-spot",
            help="Also watch spot (interruptible, preemptible) offers, as `cheapest "
            "--include-spot` ranks them; their alerts say spot. Default: a spot price is "
            "another product and never alerts.",
        ),
    ] = False,
    db: DbOption = None,
    fmt: FormatOption = OutputFormat.TABLE,
) -> None:
    """Add a watch: alert when a matching card frees up (confirmed), or drops under --max-price.

    Give a GPU model, a minimum VRAM, or both. Offers already in stock when the watch starts
    do not alert: the watch tells you about changes from its first poll on. Spot
    (interruptible) offers are left out unless --include-spot.
    """
    import logging

    from flows.providers import check_names
    from gpurent_core.model import utcnow
    from warehouse.lake import retrying_writes
    from warehouse.watch.store import add_watch

    if gpu is None and min_vram is None:
        raise typer.BadParameter("give --gpu MODEL, --min-vram GB, or both")
    model, vram, form = _resolve_gpu(gpu, min_vram)
    price, code, unit = _price_cap(max_price, currency, per, count)
    providers = list(provider or [])
    try:
        check_names(providers)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--provider") from exc
    destinations = _destinations(list(notify or []), list(notify_config or []))
    regions = [r.strip() for r in region or []]
    if any(not r for r in regions):  # "" matches every region: an unset shell variable
        raise typer.BadParameter("a region is empty text", param_hint="--region")

    def attempt() -> Any:
        with _writer(db) as con:
            return add_watch(
                con,
                created_at=utcnow(),
                notify_urls=destinations,
                gpu_model=model,
                min_vram_gb=vram,
                gpu_count=count,
                max_price=price,
                currency=code,
                price_per=unit,
                providers=providers,
                regions=regions,
                gpu_form_factor=form,
                include_spot=include_spot,
            )

    # On a lake, beside another machine's writes: a refused commit takes the next id.
    from gpurent.api.warehouse import lake_chosen, resolve_db

    target = resolve_db(db)
    new_file = not lake_chosen() and not target.exists()
    watch = retrying_writes(
        attempt, what="the watch was added", log=logging.getLogger(__name__).info
    )
    if new_file:  # a mistyped --db would otherwise hold the only watch, unseen
        typer.echo(f"created a new warehouse at {target} (no crawl has filled it yet)", err=True)
    _render_watches([watch], fmt, title="watch added")
    if fmt is OutputFormat.TABLE:
        Console(stderr=True).print(
            f"[dim]watch #{watch.watch_id} alerts from its next poll: `gpurent watch poll` now, "
            "or `gpurent schedule` to poll every 5 minutes.[/]"
        )


def _expected_wait(con: duckdb.DuckDBPyConnection, watch: Any) -> str:
    """ "expected wait about 3 h, from 41 sold-out spells" (or "not enough history (...)"):
    the restock forecast (``gpurent.api.restock_forecast``) of what the watch matches, at its
    one provider if it names one, else every provider's spells pooled."""
    from datetime import UTC, datetime

    from gpurent.api.forecast import forecast_from
    from gpurent_core.forecast import spells_from_polls
    from warehouse.forecast import card_polls

    polls = card_polls(
        con,
        gpu_model=watch.gpu_model,
        min_vram_gb=watch.min_vram_gb,
        providers=watch.providers or None,
        gpus=watch.gpu_count,
        keep=watch.matches,
    )
    found = forecast_from(
        polls, spells_from_polls(polls), gpu_model=watch.gpu_text(), vram_gb=watch.min_vram_gb,
        provider=watch.providers[0] if len(watch.providers) == 1 else None,
        region=", ".join(watch.regions) or None, gpus=watch.gpu_count, at=datetime.now(UTC),
    )  # fmt: skip
    return str(found.summary)


@watch_app.command("list")
def list_(db: DbOption = None, fmt: FormatOption = OutputFormat.TABLE) -> None:
    """List the watches (notification URLs masked: secrets are never printed)."""
    from gpurent.api.warehouse import warehouse_exists
    from warehouse.watch.store import list_watches

    if not warehouse_exists(db):  # the file, or a lake (GPURENT_LAKE_CATALOG)
        render([], fmt, columns=LIST_COLUMNS, empty_message="No watches yet.")
        return
    with _reader(db) as con:
        watches = list_watches(con)
        waits = {w.watch_id: _expected_wait(con, w) for w in watches}
    _render_watches(
        watches,
        fmt,
        title="watches",
        empty_message="No watches yet: `gpurent watch add --gpu 'RTX 4090' --notify URL`.",
        waits=waits,
    )
    from gpurent_core.notify import holds_secret

    # Watches added before literal secrets were refused may still hold one: say which.
    for watch in watches:
        if any(holds_secret(url) for url in watch.notify_urls):
            typer.secho(
                f"note: watch #{watch.watch_id} stores a literal secret in a notify URL (added "
                "before gpurent refused them): remove it and add it again with ${NAME}.",
                err=True,
                fg="yellow",
            )


@watch_app.command("remove")
def remove(
    watch_id: Annotated[int, typer.Argument(help="Watch id (see `gpurent watch list`).")],
    db: DbOption = None,
) -> None:
    """Remove a watch: its notification URLs are deleted, its pending notifications
    cancelled (not sent), and the database checkpointed so the rows leave the write-ahead
    log. DuckDB may keep old bytes in free blocks until it reuses them."""
    import logging

    from warehouse.lake import retrying_writes
    from warehouse.watch.store import WatchNotFound, remove_watch

    require_db(db)

    def attempt() -> int:
        with _writer(db) as con:
            return remove_watch(con, watch_id)

    try:
        # On a lake, beside another machine's writes: a refused commit runs again.
        cancelled = retrying_writes(
            attempt, what=f"watch #{watch_id} was removed", log=logging.getLogger(__name__).info
        )
    except WatchNotFound as exc:
        refuse(str(exc), code=1)
    typer.echo(f"removed watch #{watch_id}; {cancelled} pending notification(s) cancelled")


@watch_app.command("test")
def test(
    watch_id: Annotated[int, typer.Argument(help="Watch id (see `gpurent watch list`).")],
    db: DbOption = None,
    fmt: FormatOption = OutputFormat.TABLE,
) -> None:
    """Send a test notification to every URL of a watch now (not through the outbox)."""
    from gpurent_core.model import utcnow
    from gpurent_core.notify import NotifyError, mask_url, send
    from warehouse.watch.message import trial_message
    from warehouse.watch.store import WatchNotFound, get_watch

    with _reader(db) as con:
        try:
            watch = get_watch(con, watch_id)
        except WatchNotFound as exc:
            refuse(str(exc), code=1)
    message = trial_message(watch, now=utcnow())
    rows = []
    for url in watch.notify_urls:
        try:
            send(url, message.title, message.body)
            rows.append({"notify": mask_url(url), "result": "sent", "error": None})
        except NotifyError as exc:
            rows.append({"notify": mask_url(url), "result": "failed", "error": str(exc)})
    render(rows, fmt, columns=["notify", "result", "error"], title=f"test of watch #{watch_id}")
    if any(r["result"] != "sent" for r in rows):
        raise typer.Exit(1)


@watch_app.command("poll")
def poll(
    replay: ReplayOption = None,
    scene: SceneOption = "default",
    step: StepOption = 1,
    min_interval: Annotated[
        int | None,
        typer.Option(
            "--min-interval",
            min=0,
            help="Seconds between polls of one provider, overriding each provider's own "
            "minimum (default: the provider's; 0 with --replay).",
            show_default=False,
        ),
    ] = None,
    db: DbOption = None,
    fmt: FormatOption = OutputFormat.TABLE,
) -> None:
    """Run one watch poll now (the flow `gpurent schedule` runs every few minutes).

    Crawls the providers the watches need, loads them, evaluates the watches and sends
    due notifications, retries included.
    """
    replay_dir = Path(replay).expanduser() if replay else None
    if replay_dir is not None and not replay_dir.is_dir():
        raise typer.BadParameter(f"{replay_dir} is not a directory", param_hint="--replay")
    path = writable_db(db)  # a bad --db is said before the poll crawls, not after
    configured = settings()
    result = _run_poll(
        db_path=path,
        work_dir=configured.work_dir or path.parent / "feeds",
        replay=replay is not None,
        replay_dir=replay_dir,
        scene=scene,
        step=step,
        min_interval_s=min_interval,
    )
    if fmt is OutputFormat.JSON:
        sys.stdout.write(json.dumps(to_jsonable(result), ensure_ascii=False, indent=2) + "\n")
        _refuse_blind_poll(result)
        return
    render(result["providers"], fmt, columns=POLL_COLUMNS, title=f"watch poll {result['run_id']}")
    if fmt is OutputFormat.TABLE:
        delivery = result["delivery"]
        console = Console()
        expired = [a for a in result["alerts"] if a["stale"]]
        for alert in result["alerts"]:
            if alert["stale"]:
                continue
            console.print(f"alert: {alert['title']}", markup=False, highlight=False)
        for alert in expired:
            console.print(
                f"expired, not sent (seen over an hour ago; the next poll that confirms it "
                f"announces it): {alert['title']}",
                markup=False,
                highlight=False,
            )
        sent_alerts = len(result["alerts"]) - len(expired)
        console.print(
            f"{sent_alerts} alert(s)"
            + (f", {len(expired)} expired unsent" if expired else "")
            + f"; notifications sent {delivery['sent']}, "
            f"failed {delivery['failed']} (retried on later polls)",
            markup=False,
        )
    _refuse_blind_poll(result)


def _refuse_blind_poll(result: Mapping[str, Any]) -> None:
    """A poll whose every crawl failed saw nothing: "0 alert(s)" with exit 0 read as a
    quiet market. Exit 1 with a line saying so (a skipped provider was not due: no crawl)."""
    crawled = [p for p in result["providers"] if p.get("action") == "polled"]
    if crawled and all(p.get("status") in BLIND_STATUSES for p in crawled):
        refuse("every provider polled failed or was refused: this poll saw nothing", code=1)


BLIND_STATUSES = frozenset({"failed", "layout_changed", "auth_required"})


@watch_app.command("deliver")
def deliver(
    all_pending: Annotated[
        bool,
        typer.Option("--all", help="Try every pending notification now, ignoring its backoff."),
    ] = False,
    db: DbOption = None,
    fmt: FormatOption = OutputFormat.TABLE,
) -> None:
    """Send the pending notifications that are due (failed ones retry with backoff)."""
    from gpurent_core.model import utcnow
    from gpurent_core.notify import send
    from warehouse.watch.outbox import deliver_pending

    require_db(db)
    with _writer(db) as con:
        report = deliver_pending(con, send, now=utcnow(), ignore_schedule=all_pending, clock=utcnow)
    render([report.as_dict()], fmt, columns=["sent", "failed", "cancelled", "errors"])
    if report.failed:
        raise typer.Exit(1)


@watch_app.command("outbox")
def outbox(
    status: Annotated[
        str | None,
        typer.Option("--status", help="Only pending, sent, cancelled or expired notifications."),
    ] = None,
    limit: Annotated[
        int, typer.Option("--limit", min=1, help="Notifications to show, newest first.")
    ] = 50,
    db: DbOption = None,
    fmt: FormatOption = OutputFormat.TABLE,
) -> None:
    """Notifications, newest first: sent, pending (with attempts and the last error), cancelled."""
    from warehouse.watch.outbox import outbox_rows

    if status is not None:
        status = status.strip().lower()
        if status not in OUTBOX_STATUSES:  # a typo showed an empty outbox
            raise typer.BadParameter(
                f"{status!r}: one of {', '.join(OUTBOX_STATUSES)}", param_hint="--status"
            )
    with _reader(db) as con:
        rows = outbox_rows(con, status=status, limit=limit).to_dicts()
    if fmt is OutputFormat.TABLE:
        rows = [
            {
                "id": r["notification_id"],
                "watch": r["watch_id"],
                "kind": r["kind"],
                "offer": f"{r['provider']}/{r['offer_key']}",
                "status": r["status"],
                "tries": r["attempts"],
                "when": r["sent_at"] or r["next_attempt_at"],
                "last_error": r["last_error"],
            }
            for r in rows
        ]
    render(rows, fmt, title="outbox", empty_message="No notifications yet.")


# The commands of this module; the console script (gpurent.cli.app) adds them to its app.
app = typer.Typer()

app.add_typer(watch_app, name="watch")
