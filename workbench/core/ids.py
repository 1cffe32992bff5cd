"""Stable identifiers and content hashes.

Ids must not change between runs or machines, so they are hashes of normalised text rather
than row numbers.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from pathlib import Path
from typing import Any

_SPACES = re.compile(r"\s+")
KEY_SEPARATOR = "\x1f"  # never occurs in text the tool handles: safe to join cache-key and hash parts


def normalise_text(text: str) -> str:
    """Unicode NFC, collapsed whitespace, stripped; case is kept (it matters to models)."""
    return _SPACES.sub(" ", unicodedata.normalize("NFC", text)).strip()


def short_hash(*parts: str, length: int = 16) -> str:
    h = hashlib.sha256(KEY_SEPARATOR.join(parts).encode("utf-8")).hexdigest()
    return h[:length]


def hypothesis_id(text: str) -> str:
    """The id of a generated hypothesis: equal texts (after normalisation) share one id."""
    return short_hash(normalise_text(text))


def json_hash(obj: Any) -> str:
    """Hash of a JSON-serialisable object, independent of key order."""
    blob = json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def file_sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def joined_key(*parts: object) -> str:
    """One cache key from several parts (model outputs are cached by such keys)."""
    return KEY_SEPARATOR.join(str(p) for p in parts)


def split_key(key: str, parts: int = 2) -> list[str]:
    return key.split(KEY_SEPARATOR, parts - 1)
