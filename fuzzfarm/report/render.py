"""The reports' and reproducers' text, rendered from jinja2 templates kept as package data
(``fuzzfarm/report/templates/*.j2``): no program or report is held as a Python string.

Filters: ``py`` (a Python literal: ``repr``), ``hex`` (an integer as 0x...), ``c`` (a C string literal, non-printable
bytes as octal escapes), ``md`` (a Markdown table cell), and jinja2's ``e`` (HTML).  Block
tags take their line's indentation and newline with them (``trim_blocks``,
``lstrip_blocks``).
"""
from __future__ import annotations

from functools import lru_cache

__all__ = ["render", "c_string", "md_cell"]


def md_cell(text) -> str:
    """``text`` as one Markdown table cell: backslashes and pipes escaped, on one line."""
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def c_string(text: str) -> str:
    """A C string literal of ``text`` (printable ASCII kept, the rest as octal escapes)."""
    out = []
    for b in str(text).encode():
        ch = chr(b)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 32 <= b < 127:
            out.append(ch)
        else:
            out.append(f"\\{b:03o}")
    return '"' + "".join(out) + '"'


@lru_cache(maxsize=None)
def _environment():
    import jinja2
    env = jinja2.Environment(loader=jinja2.PackageLoader("fuzzfarm.report", "templates"),
                             undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                             autoescape=False, trim_blocks=True, lstrip_blocks=True)
    env.filters["py"] = repr
    env.filters["c"] = c_string
    env.filters["md"] = md_cell
    env.filters["hex"] = hex
    return env


def render(name: str, **values) -> str:
    """Template ``name`` (a file of fuzzfarm/report/templates) rendered with ``values``.  Raises
    jinja2.UndefinedError for a value the template needs and was not given."""
    return _environment().get_template(name).render(**values)
