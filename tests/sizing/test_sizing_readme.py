"""The README's sizing example shows what the answer promises: a target met by an offer
whose speed is known (for every user of the batch), never "unknown" worded as meeting."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def sizing_example() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("### Sizing")
    section = text[start : text.index("\n#", start + 1)]  # up to the next heading
    blocks = re.findall(r"```\n(\$ gpurent size.*?)```", section, flags=re.S)
    assert len(blocks) == 1, "one worked example in the README's Sizing section"
    return blocks[0]


def test_the_example_meets_a_target_with_a_known_speed() -> None:
    example = sizing_example()
    assert "--ttft-ms" in example or "--tokens-per-s" in example
    flat = " ".join(example.split())
    pick = re.search(r"Rent (?P<offer>.+?) \(row 1\): .*?meets the targets \((?P<t>[^)]*)\)", flat)
    assert pick, "the answer starts with the offer to rent, meeting the targets"
    told = flat[pick.start() : flat.find(". ", pick.end())]  # the pick's own sentence
    # The target is for every user: the last of the batch's prompts sent at once.
    alone = re.search(r"first token (\d+) ms(?:, | for a prompt alone)", told)
    worst = re.search(r"up to (\d+) ms with all \d+ at once, ", told) or alone
    target = re.search(r"first token <= (\d+) ms", pick["t"])
    assert alone and worst and target
    assert int(alone[1]) <= int(worst[1]) <= int(target[1])
    assert "unknown" not in told
    assert "first token unknown" not in flat
