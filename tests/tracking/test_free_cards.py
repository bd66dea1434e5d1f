"""`rank`'s free cards count a pool once (audit: JarvisLabs' container and VM offers of one
region each repeat the region's free count, and were summed into twice the cards)."""

from __future__ import annotations

from pathlib import Path

from tests.tracking.test_confirmed_reads import Warehouse
from warehouse.trends import rental_heat

H100 = {"gpu_model": "H100", "gpu_vram_gb": 80}


def test_a_pooled_count_repeated_by_several_offers_counts_once(tmp_path: Path) -> None:
    wh = Warehouse(tmp_path)
    kit = wh.kit
    # jarvislabs' count is its region's (not a machine's): its container and VM offers of
    # one region both say 3, another region says 2.
    jl = kit.run(1, provider="jarvislabs")
    wh.load(jl, [
        kit.offer(jl, "container-in1", region="IN1", available_count=3),
        kit.offer(jl, "vm-in1", region="IN1", available_count=3),
        kit.offer(jl, "vm-eu1", region="EU1", available_count=2),
    ])  # fmt: skip
    # acme's counts are each a machine's (tests/conftest.py): two machines, 2 + 4 free.
    acme = kit.run(1)
    wh.load(acme, [
        kit.offer(acme, "m1", region="IN1", available_count=2),
        kit.offer(acme, "m2", region="IN1", available_count=4),
    ])  # fmt: skip
    heat = rental_heat(wh.con, display_currency="USD")
    (row,) = [r for r in heat.rows if r["gpu_model"] == "H100"]
    assert row["free_cards"] == 3 + 2 + (2 + 4)  # before: 3 + 3 + 2 + 2 + 4 = 14
    wh.close()


def test_no_count_at_all_is_no_figure(tmp_path: Path) -> None:
    wh = Warehouse(tmp_path)
    kit = wh.kit
    run = kit.run(1, provider="jarvislabs")
    wh.load(run, [kit.offer(run, "a", available_count=None)])
    (row,) = rental_heat(wh.con, display_currency="USD").rows
    assert row["free_cards"] is None
    wh.close()
