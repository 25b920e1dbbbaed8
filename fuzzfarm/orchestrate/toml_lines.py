"""Where a key is in a TOML text: tomllib gives values but no positions, so a campaign's
one-line errors (``fuzzfarm.orchestrate.campaign.CampaignError``) find the line of the key
they name here -- a small scanner of the text: table headers, arrays of tables numbered
from 1 (``jobs[2]``), keys, strings, and values spanning lines.
"""
from __future__ import annotations

import re
import sys
from functools import lru_cache

if sys.version_info >= (3, 11):
    import tomllib
else:                                   # pragma: no cover - pyproject depends on tomli there
    import tomli as tomllib

__all__ = ["line_of", "locate"]


def line_of(locs: dict, key: str | None) -> int | None:
    """The line of ``key``, else of its nearest enclosing key ('jobs[2].x' -> 'jobs[2]' ->
    'jobs'), else None."""
    while key:
        if key in locs:
            return locs[key]
        parent = re.sub(r"(\[\d+\]|\.[^.\[\]]*|^[^.\[\]]*)$", "", key)
        if parent == key:
            break
        key = parent
    return None


@lru_cache(maxsize=32)
def locate(text: str) -> dict:
    """{dotted key: 1-based line} for every table header and key of valid TOML ``text``.

    Arrays of tables are numbered from 1 per array (``jobs[2]``; ``jobs`` is the first
    header's line); quoted and dotted keys are resolved (``a."b.c"`` is a, then b.c); a
    value that spans lines (array, multi-line string) is skipped, its key at its first
    line.  Keys inside inline tables are not located (their table's line is used)."""
    locs: dict = {}
    aot: dict = {}                      # resolved array-of-tables path -> count so far
    table = ""
    i, n = 0, len(text)

    def record(path, pos):
        locs.setdefault(path, text.count("\n", 0, pos) + 1)

    while i < n:
        c = text[i]
        if c in " \t\r\n":
            i += 1
        elif c == "#":
            i = _eol(text, i)
        elif c == "[":
            many = text.startswith("[[", i)
            start = i + (2 if many else 1)
            end = _key_end(text, start, "]")
            parts = _key_parts(text[start:end])
            path = ""
            for k, part in enumerate(parts):
                path = f"{path}.{part}" if path else part
                if many and k == len(parts) - 1:
                    aot[path] = aot.get(path, 0) + 1
                    record(path, i)
                    path = f"{path}[{aot[path]}]"
                elif path in aot:
                    path = f"{path}[{aot[path]}]"
                else:
                    record(path, i)
            record(path, i)
            table = path
            i = _eol(text, end)
        else:
            eq = _key_end(text, i, "=")
            path = table
            for part in _key_parts(text[i:eq]):
                path = f"{path}.{part}" if path else part
                record(path, i)
            i = _skip_value(text, eq + 1)
    return locs


def _eol(text: str, i: int) -> int:
    j = text.find("\n", i)
    return len(text) if j < 0 else j


def _key_parts(keytext: str) -> list:
    """['a', 'b.c'] for the TOML key text 'a."b.c"' (parsed by tomllib itself)."""
    d = tomllib.loads(keytext.strip() + " = 0")
    parts = []
    while isinstance(d, dict):
        (k, d), = d.items()
        parts.append(k)
    return parts


def _string_end(text: str, i: int) -> int:
    """Index after the string starting at ``i`` (basic, literal, or multi-line)."""
    q = text[i]
    if text.startswith(q * 3, i):
        j = i + 3
        while True:
            if q == '"' and text[j] == "\\":
                j += 2
            elif text.startswith(q * 3, j):
                j += 3
                for _ in range(2):              # up to two quotes may end the content
                    if j < len(text) and text[j] == q:
                        j += 1
                return j
            else:
                j += 1
    j = i + 1
    while text[j] != q:
        j += 2 if q == '"' and text[j] == "\\" else 1
    return j + 1


def _key_end(text: str, i: int, stop: str) -> int:
    """Index of ``stop`` ('=' or ']') ending the key that starts at ``i``."""
    while text[i] != stop:
        i = _string_end(text, i) if text[i] in "\"'" else i + 1
    return i


def _skip_value(text: str, i: int) -> int:
    """Index of the newline that ends the value starting at ``i`` (or the end)."""
    depth, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            i = _string_end(text, i)
        elif c == "#":
            i = _eol(text, i)
        elif c in "[{":
            depth, i = depth + 1, i + 1
        elif c in "]}":
            depth, i = depth - 1, i + 1
        elif c == "\n" and depth <= 0:
            return i
        else:
            i += 1
    return n
