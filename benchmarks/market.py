"""The synthetic market: JSON Lines feeds in the shape the spiders write, fast to make.

Lines are formatted from templates rather than through pydantic, so a million offers take
seconds to write; a test checks that they parse as ``gpurent_core.model`` records. Each offer has
two add-on fees and one monthly plan; 1 in 100 offers is followed by a quarantine line, as
a real crawl has a few inputs it could not trust.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

START = datetime(2026, 10, 1, tzinfo=UTC)
# (vendor, model, vram): a third of them fit --min-vram 32 with room to spare.
GPUS = (
    ("NVIDIA", "RTX 4090", 24),
    ("NVIDIA", "A100", 80),
    ("NVIDIA", "H100", 80),
    ("NVIDIA", "L40S", 48),
    ("NVIDIA", "RTX A6000", 48),
    ("NVIDIA", "RTX 3090", 24),
    ("NVIDIA", "V100", 32),
)
STATUSES = ("in_stock", "in_stock", "sold_out", "low", "unknown")

_FEES = (
    '[{{"fee_type":"data_disk","amount":"0.00005","currency":"USD","unit":"hour","basis":"gb",'
    '"quantity":null,"included_quantity":"{free}","mandatory":true,"charged_while_stopped":true,'
    '"note":null}},{{"fee_type":"vcpu","amount":"0.003","currency":"USD","unit":"hour",'
    '"basis":"vcpu","quantity":"{vcpus}","included_quantity":null,"mandatory":true,'
    '"charged_while_stopped":false,"note":null}}]'
)
_PLANS = (
    '[{{"price":"{plan}","currency":"{currency}","billing_unit":"month",'
    '"price_basis":"instance","price_kind":"commitment"}}]'
)
_OFFER = (
    '{{"kind":"offer","provider":"{provider}","offer_key":"{key}","run_id":"{run_id}",'
    '"observed_at":"{at}","gpu_vendor":"{vendor}","gpu_model":"{model}","gpu_vram_gb":{vram},'
    '"gpu_form_factor":null,"gpu_count":{count},"raw_gpu_name":"{vendor} {model} {vram}GB",'
    '"status":"{status}","available_count":{free_cards},"price":"{price}",'
    '"currency":"{currency}","billing_unit":"hour","price_basis":"{basis}",'
    '"price_kind":"on_demand","region":"region-{region}",'
    '"url":"https://example.invalid/{provider}/{i}","fees":{fees},"plans":{plans}}}\n'
)
_QUARANTINE = (
    '{{"kind":"quarantine","provider":"{provider}","run_id":"{run_id}","observed_at":"{at}",'
    '"offer_key":"{key}-q","reason":"gpu_unresolved: \'GTX 1070\': not in the catalog",'
    '"field":"gpu_name","raw":{{"gpu_name":"GTX 1070"}}}}\n'
)


def feed_lines(provider: str, run_id: str, n: int, *, at: datetime = START) -> Iterator[str]:
    """N offer lines, and a quarantine line after every 100th offer."""
    stamp = at.isoformat().replace("+00:00", "Z")
    for i in range(n):
        vendor, model, vram = GPUS[i % len(GPUS)]
        per_gpu = i % 3 == 0
        count = 1 if per_gpu else 1 + i % 8
        currency = "USD" if i % 5 else "CNY"
        key = f"{provider}-{i:07d}"
        yield _OFFER.format(
            provider=provider,
            key=key,
            run_id=run_id,
            at=stamp,
            vendor=vendor,
            model=model,
            vram=vram,
            count=count,
            status=STATUSES[i % len(STATUSES)],
            free_cards="null" if i % 7 == 0 else i % 9,
            price=f"{(35 + i % 400) // 100}.{(35 + i % 400) % 100:02d}",
            currency=currency,
            basis="gpu" if per_gpu else "instance",
            region=i % 17,
            i=i,
            fees=_FEES.format(free=10 * (i % 4), vcpus=4 * count),
            plans=_PLANS.format(plan=200 + i % 900, currency=currency),
        )
        if i % 100 == 0:
            yield _QUARANTINE.format(provider=provider, run_id=run_id, at=stamp, key=key)


def write_feed(path: Path, provider: str, run_id: str, n: int) -> Path:
    with path.open("w", encoding="utf-8") as out:
        buffer: list[str] = []
        for line in feed_lines(provider, run_id, n):
            buffer.append(line)
            if len(buffer) >= 10_000:
                out.write("".join(buffer))
                buffer.clear()
        out.write("".join(buffer))
    return path


def offer_count(n: int) -> tuple[int, int]:
    """(offers, quarantine lines) in a feed of n offers."""
    return n, (n + 99) // 100


def first_line(provider: str = "bench", run_id: str = "run-1") -> dict[str, object]:
    """One decoded offer line (for tests)."""
    line = next(feed_lines(provider, run_id, 1))
    decoded: dict[str, object] = json.loads(line)
    return decoded
