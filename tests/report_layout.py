"""How an HTML report lays out in headless Chromium (issue 30, item 5): whether the page
scrolls sideways at a given width, where its first table and first plot start, and a
screenshot.  A test helper and a script:

    python3 tests/report_layout.py REPORT.html [--width 1280] [--png shot.png]

Chromium runs the page with a small script added to a temporary copy (the report itself
has none) that writes the measures into its title; ``--dump-dom`` prints them.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

_PROBE = """<script>
var t = document.querySelector('table'), i = document.querySelector('img');
document.title = JSON.stringify({scroll_width: document.documentElement.scrollWidth,
  first_table_y: t ? t.getBoundingClientRect().top + window.scrollY : null,
  first_img_y: i ? i.getBoundingClientRect().top + window.scrollY : null});
</script></body>"""


def chromium() -> str | None:
    """The Chromium executable, or None."""
    return next((p for p in map(shutil.which, ("chromium", "chromium-browser",
                                               "google-chrome")) if p), None)


def _run(args: list, timeout: float = 120) -> subprocess.CompletedProcess:
    exe = chromium()
    if exe is None:
        raise FileNotFoundError("no Chromium (apt-get install chromium)")
    return subprocess.run([exe, "--headless", "--disable-gpu", "--no-sandbox",
                           "--hide-scrollbars", *args], capture_output=True, text=True,
                          timeout=timeout)


def measure(html: Path, width: int = 1280) -> dict:
    """{"scroll_width", "first_table_y", "first_img_y"} (CSS pixels) of ``html`` in a
    ``width``-pixel window.  Raises FileNotFoundError without Chromium, RuntimeError
    when it prints no measures."""
    text = Path(html).read_text(encoding="utf-8").replace("</body>", _PROBE, 1)
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp, "page.html")
        page.write_text(text, encoding="utf-8")
        r = _run([f"--window-size={width},1000", "--virtual-time-budget=5000",
                  "--dump-dom", page.as_uri()])
    m = re.search(r"<title>(\{.*?\})</title>", r.stdout.replace("&quot;", '"'))
    if not m:
        raise RuntimeError(f"Chromium printed no measures: {r.stderr.strip()[-300:]}")
    return json.loads(m.group(1))


def screenshot(html: Path, png: Path, width: int = 1280, height: int = 2400) -> Path:
    """A ``width`` x ``height`` screenshot of ``html`` written to ``png``."""
    _run([f"--window-size={width},{height}", f"--screenshot={Path(png).resolve()}",
          Path(html).resolve().as_uri()])
    return Path(png)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("html", type=Path)
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--png", type=Path, default=None)
    a = ap.parse_args(argv)
    m = measure(a.html, a.width)
    print(json.dumps(m))
    if a.png:
        print(screenshot(a.html, a.png, a.width))
    return 0 if m["scroll_width"] <= a.width else 1


if __name__ == "__main__":
    sys.exit(main())
