"""What the bundle may leave out, checked without building it: `cryptography` stays,
because the keyring's Secret Service backend (where Preferences keep API keys on Linux)
cannot load without it, though google-auth never loads it with an API key."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import sys
{block}
from forkwise.core.runtime.providers.gemini import GeminiProvider
GeminiProvider(api_key="AIza-probe", base_url="http://127.0.0.1:9")._client()
print("gemini client:", sys.modules.get("cryptography") is not None)
try:
    import secretstorage  # noqa: F401  (what keyring's Secret Service backend loads)
except ImportError as exc:
    print("secretstorage:", exc)
else:
    print("secretstorage: loaded")
"""


def probe(block: str) -> str:
    return subprocess.run([sys.executable, "-c", PROBE.format(block=block)], capture_output=True,
                          text=True, check=True, timeout=60).stdout


def test_cryptography_is_needed_by_the_keyring_not_by_gemini_with_a_key() -> None:
    pytest.importorskip("secretstorage")
    with_it = probe("")
    assert "gemini client: False" in with_it, with_it  # a Gemini client with a key: unused
    assert "secretstorage: loaded" in with_it, with_it
    without = probe("sys.modules['cryptography'] = None")
    assert "secretstorage: No module named 'cryptography" in without, without
    spec = (ROOT / "packaging" / "forkwise.spec").read_text()
    excludes = spec.split("EXCLUDES = [", 1)[1].split("]", 1)[0]
    assert not re.search(r'"cryptography', excludes), "excluding it breaks the keyring"
