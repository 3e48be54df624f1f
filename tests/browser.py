"""A page measured in a real headless Chromium at phone, tablet and desktop widths.

Chromium will not make a window narrower than 500 px, so each width is an iframe of that width in one
probe page (an iframe is a viewport of its own: media queries and `width: 100%` follow it). Once
everything loaded, the probe page reads each framed page and writes what it measured into its own DOM,
which `--dump-dom` prints: the page's scroll width against the frame's width, and per trend chart its
figure, its run labels (their visible text and hover title) and how many texts leave the chart's
drawing area (a clipped label).
"""

from __future__ import annotations

import html
import json
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

WIDTHS = (360, 768, 1400)
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--allow-file-access-from-files",  # the probe page reads the framed page (both file://)
)  # fmt: skip

_PROBE = """<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>{frames}<script>
function measure(frame) {{
  var win = frame.contentWindow, doc = win.document, root = doc.documentElement;
  var charts = Array.prototype.map.call(doc.querySelectorAll('svg.trend'), function (svg) {{
    var box = svg.viewBox.baseVal, clipped = 0;
    svg.querySelectorAll('text').forEach(function (text) {{
      var b = text.getBBox();
      if (b.x < 0 || b.y < 0 || b.x + b.width > box.width || b.y + b.height > box.height) clipped++;
    }});
    var labels = Array.prototype.map.call(svg.querySelectorAll('text.run'), function (text) {{
      var lines = Array.prototype.map.call(text.querySelectorAll('tspan'), function (t) {{
        return t.textContent; }});
      var title = text.querySelector('title');
      return {{text: lines.join(' '), title: title ? title.textContent : ''}};
    }});
    return {{figure: svg.dataset.figure, labels: labels, clipped: clipped,
             width: svg.getBoundingClientRect().width}};
  }});
  return {{width: win.innerWidth, scrollWidth: root.scrollWidth, ready: doc.body.dataset.ready,
           charts: charts}};
}}
window.addEventListener('load', function () {{
  var found = {{}};
  document.querySelectorAll('iframe').forEach(function (frame) {{
    found[frame.dataset.width] = measure(frame); }});
  document.body.setAttribute('data-probe', JSON.stringify(found));
}});
</script></body></html>
"""


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def measure(browser: str, page: Path, widths: Sequence[int] = WIDTHS) -> dict[int, dict[str, Any]]:
    """{width: {"width", "scrollWidth", "ready", "charts": [{"figure", "labels", "clipped", "width"}]}}
    of `page` framed at each of `widths` (CSS pixels)."""
    frames = "".join(
        f'<iframe data-width="{w}" src="{page.as_uri()}" style="width:{w}px;height:1200px;border:0"></iframe>'
        for w in widths
    )
    with tempfile.TemporaryDirectory(prefix="probe-") as folder:
        probe = Path(folder) / "probe.html"
        probe.write_text(_PROBE.format(frames=frames))
        profile = Path(folder) / "profile"
        dom = subprocess.run(
            [browser, *FLAGS, f"--user-data-dir={profile}", "--window-size=1500,1000", "--dump-dom",
             probe.as_uri()],
            capture_output=True, text=True, timeout=120, check=True,
        ).stdout  # fmt: skip
    start = dom.index('data-probe="') + len('data-probe="')
    found = json.loads(html.unescape(dom[start : dom.index('"', start)]))
    return {int(width): value for width, value in found.items()}
