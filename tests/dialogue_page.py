"""The HTML report's dialogue view (reports/dialogues.py) read back as data, for the tests: per dialogue,
per turn, what the page shows."""

from __future__ import annotations

import re
from html import unescape
from typing import Any


def dialogue_sections(page: str) -> list[dict[str, Any]]:
    """Each dialogue of the page's dialogue view: its scenario, status, summary text and figures
    (key -> data-value, or the text when not measured), and per turn its status, figures, state
    verdicts and problems."""
    found = []
    for opened in page.split('<details class="dialogue"')[1:]:
        head, *turns = opened.split("</details>", 1)[0].split('<section class="turn"')
        found.append(
            {
                "scenario": unescape(re.search(r'data-scenario="([^"]*)"', head)[1]),  # type: ignore[index]
                "status": re.search(r'data-status="([^"]*)"', head)[1],  # type: ignore[index]
                "summary": unescape(
                    re.sub(r"<[^>]+>", "", head.split("<summary>", 1)[1].split("</summary>", 1)[0])
                ),
                "figures": _figures(head),
                "turns": [_turn(turn) for turn in turns],
            }
        )
    return found


def _figures(block: str) -> dict[str, str]:
    return {
        key: value or "not measured"
        for key, value in re.findall(r'<li data-key="([a-z_]+)"(?: data-value="([^"]*)")?>', block)
    }


def _turn(block: str) -> dict[str, Any]:
    problems = (
        block.split('<ul class="problems">', 1)[1].split("</ul>", 1)[0]
        if '<ul class="problems">' in block
        else ""
    )
    return {
        "turn": int(re.search(r'data-turn="(\d+)"', block)[1]),  # type: ignore[index]
        "status": re.search(r'data-status="([^"]*)"', block)[1],  # type: ignore[index]
        "figures": _figures(block),
        "verdicts": {  # the last cell of each state row
            row.split('"', 1)[0]: unescape(re.findall(r"<td[^>]*>([^<]*)</td>", row)[-1])
            for row in block.split('<tr data-key="')[1:]
        },
        "problems": [unescape(p) for p in re.findall(r"<li>(.*?)</li>", problems)],
    }
