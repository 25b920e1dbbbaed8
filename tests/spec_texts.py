"""The specification texts some tests re-read (docs/specifications.md): the folder
``FUZZFARM_SPEC_TEXTS`` names, or none (those tests are skipped, saying so)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: The digest of C99 F.9 with its rule ids: in the repository, always there.
DIGEST = ROOT / "docs" / "c99_annex_f9.md"
#: The folder of the specification texts, or None.
TEXTS = Path(os.environ["FUZZFARM_SPEC_TEXTS"]) if os.environ.get("FUZZFARM_SPEC_TEXTS") \
    else None


def text_path(name: str) -> Path | None:
    """The path of specification text ``name`` (a file name of docs/specifications.md),
    or None where FUZZFARM_SPEC_TEXTS is unset."""
    return None if TEXTS is None else TEXTS / name


def read_text(name: str) -> str:
    """Specification text ``name``; skips the calling test where it is not at hand."""
    path = text_path(name)
    if path is None or not path.is_file():
        pytest.skip(f"specification text {name} is not at hand (set FUZZFARM_SPEC_TEXTS: "
                    f"docs/specifications.md)")
    return path.read_text(encoding="utf-8")
