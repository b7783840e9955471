"""The .deb's machine-readable copyright file, written from what the bundle holds.

    python3 packaging/deb_copyright.py BUNDLE PYTHON_LICENSE > copyright

One paragraph for Forkwise (LICENSE), one per Python distribution whose *.dist-info the
bundle carries (the spec copies the metadata of every bundled distribution), with its
licence expression and the licence files it ships; one for CPython (its LICENSE.txt) and one
for the ICU data Qt's wheel brings. Licences that every Debian system carries in
/usr/share/common-licenses (LGPL-3, GPL-2, GPL-3, Apache-2.0, MPL-2.0) are referred to,
not copied (Debian policy 12.5). Format: copyright-format 1.0 (DEP-5).
"""

from __future__ import annotations

import re
import sys
from email.parser import HeaderParser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PREFIX = "usr/lib/forkwise"
COMMON = {
    "LGPL-3.0-only": "LGPL-3",
    "LGPL-3.0-or-later": "LGPL-3",
    "GPL-2.0-only": "GPL-2",
    "GPL-3.0-only": "GPL-3",
    "Apache-2.0": "Apache-2.0",
    "MPL-2.0": "MPL-2.0",
}
CLASSIFIERS = {
    "MIT License": "MIT",
    "BSD License": "BSD-3-Clause",
    "Apache Software License": "Apache-2.0",
    "Mozilla Public License 2.0 (MPL 2.0)": "MPL-2.0",
    "Python Software Foundation License": "PSF-2.0",
}
ICU_NOTICE = """\
COPYRIGHT AND PERMISSION NOTICE (ICU 58 and later)

Copyright (c) 2016 and later Unicode, Inc. and others. All rights reserved.

Permission is hereby granted, free of charge, to any person obtaining a copy of the Unicode
data files and any associated documentation (the "Data Files") or Unicode software and any
associated documentation (the "Software") to deal in the Data Files or Software without
restriction, including without limitation the rights to use, copy, modify, merge, publish,
distribute, and/or sell copies of the Data Files or Software, and to permit persons to whom
the Data Files or Software are furnished to do so, provided that either (a) this copyright
and permission notice appear with all copies of the Data Files or Software, or (b) this
copyright and permission notice appear in associated Documentation.

THE DATA FILES AND SOFTWARE ARE PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A
PARTICULAR PURPOSE AND NONINFRINGEMENT OF THIRD PARTY RIGHTS. IN NO EVENT SHALL THE
COPYRIGHT HOLDER OR HOLDERS INCLUDED IN THIS NOTICE BE LIABLE FOR ANY CLAIM, OR ANY SPECIAL
INDIRECT OR CONSEQUENTIAL DAMAGES, OR ANY DAMAGES WHATSOEVER RESULTING FROM LOSS OF USE,
DATA OR PROFITS, WHETHER IN AN ACTION OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS ACTION,
ARISING OUT OF OR IN CONNECTION WITH THE USE OR PERFORMANCE OF THE DATA FILES OR SOFTWARE.

Except as contained in this notice, the name of a copyright holder shall not be used in
advertising or otherwise to promote the sale, use or other dealings in these Data Files or
Software without prior written authorization of the copyright holder.
"""


#: full texts of licences in /usr/share/common-licenses: (marker, file). A licence file that is
#: one of them is replaced by the reference (lintian: copyright-file-contains-full-*-license).
FULL_TEXTS = (
    ("Apache License\n", "Version 2.0, January 2004", "Apache-2.0"),
    ("Mozilla Public License Version 2.0", "Mozilla Public License Version 2.0", "MPL-2.0"),
    ("GNU LESSER GENERAL PUBLIC LICENSE", "Version 3, 29 June 2007", "LGPL-3"),
    ("GNU GENERAL PUBLIC LICENSE", "Version 3, 29 June 2007", "GPL-3"),
    ("GNU GENERAL PUBLIC LICENSE", "Version 2, June 1991", "GPL-2"),
)


def common_licence(text: str) -> str | None:
    """The /usr/share/common-licenses name of a full licence text, if it is one."""
    if len(text) < 5000:
        return None  # a notice (copyright line + short grant), not the licence itself
    head = text[:3000]
    for first, second, name in FULL_TEXTS:
        if first.strip() in head and second in head:
            return name
    return None


def body(text: str) -> str:
    """Text as a DEP-5 continuation: each line indented, empty lines as ' .'."""
    lines = text.expandtabs().rstrip().splitlines()
    return "\n".join(f" {line.rstrip()}" if line.strip() else " ." for line in lines)


def copyright_lines(texts: list[str], fallback: str) -> str:
    found: list[str] = []
    for text in texts:
        for line in text.splitlines():
            m = re.match(r"\s*(?:[#*]\s*)?Copyright\s*(?:\(c\)|©)?\s*(.*\d{4}.*)$", line, re.I)
            if m and m.group(1).strip() not in found:
                found.append(m.group(1).strip().rstrip("."))
    return "\n ".join(found[:6]) if found else fallback


def licence_of(meta: dict[str, str], classifiers: list[str]) -> str:
    if meta.get("License-Expression"):
        return meta["License-Expression"]
    short = (meta.get("License") or "").strip()
    if short and "\n" not in short and len(short) < 60:
        return short
    ids = [CLASSIFIERS[c.rsplit(" :: ", 1)[-1]] for c in classifiers
           if c.startswith("License ::") and c.rsplit(" :: ", 1)[-1] in CLASSIFIERS]
    return " OR ".join(ids) if ids else "UNKNOWN"


def distribution_paragraph(info: Path) -> str:
    headers = HeaderParser().parsestr((info / "METADATA").read_text(errors="replace"))
    meta = {k: str(v) for k, v in headers.items()}
    name, version = meta.get("Name", info.name), meta.get("Version", "")
    licence = licence_of(meta, headers.get_all("Classifier") or [])
    files = sorted(p for p in info.rglob("*") if p.is_file() and (
        "licenses" in p.relative_to(info).parts
        or re.match(r"(LICEN[CS]E|COPYING|NOTICE|AUTHORS)", p.name, re.I)))
    texts = [p.read_text(errors="replace") for p in files]
    author = meta.get("Author") or meta.get("Author-email") or meta.get("Maintainer-email")
    holder = copyright_lines(texts, f"the {name} authors ({author})" if author else
                             f"the {name} authors")
    top = [line.split(",")[0].split("/")[0] for line in
           (info / "RECORD").read_text().splitlines()] if (info / "RECORD").is_file() else []
    bundled = sorted({t for t in top if t and not t.endswith(".dist-info") and t != ".."
                      and (info.parent / t).exists()})
    patterns = [f"{PREFIX}/_internal/{t}/*" if (info.parent / t).is_dir()
                else f"{PREFIX}/_internal/{t}" for t in bundled]
    patterns.append(f"{PREFIX}/_internal/{info.name}/*")
    out = [f"Files: {' '.join(patterns)}", f"Copyright: {holder}", f"License: {licence}",
           f"Comment: {name} {version}. Its Python code is in {PREFIX}/forkwise (PyInstaller's"
           " archive) where not listed above."]
    refs = [COMMON[i] for i in re.findall(r"[A-Za-z0-9.\-]+", licence) if i in COMMON]
    for path, text in zip(files, texts, strict=True):
        common = common_licence(text)
        if common is not None:
            refs.append(common)
            out.append(f" .\n {path.relative_to(info)}: the {common} licence (below).")
        else:
            out.append(f" .\n {path.relative_to(info)}:\n .\n{body(text)}")
    for ref in dict.fromkeys(refs):
        out.append(f" .\n On Debian systems the complete text of {ref} is in"
                   f" /usr/share/common-licenses/{ref}.")
    if not texts and not refs:
        raise SystemExit(f"{info.name}: no licence text and no common licence ({licence})")
    return "\n".join(out)


def copyright_file(bundle: Path, python_licence: Path) -> str:
    internal = bundle / "_internal"
    parts = [
        "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
        "Upstream-Name: forkwise\n"
        f"Comment: {PREFIX} is a self-contained build: Forkwise, CPython and the Python\n"
        " distributions below, Qt for Python (PySide6, shiboken6) with the Qt libraries\n"
        " and ICU data of its wheels. The libraries it links to otherwise are the\n"
        " system's (see Depends) and carry their own copyright files.",
        f"Files: *\nCopyright: 2026 The Forkwise authors\nLicense: MIT\n"
        f"{body((ROOT / 'LICENSE').read_text())}",
        f"Files: {PREFIX}/_internal/libpython3* {PREFIX}/_internal/python3*"
        f" {PREFIX}/_internal/base_library.zip\n"
        "Copyright: 2001-2023 Python Software Foundation\n"
        "License: PSF-2.0\nComment: CPython, the interpreter and standard library the app runs.\n"
        " .\n" + body(python_licence.read_text(errors="replace")),
        f"Files: {PREFIX}/_internal/libicu*\nCopyright: 2016 and later Unicode, Inc. and others\n"
        "License: Unicode-DFS-2016\nComment: ICU, as built into Qt for Python's wheel.\n"
        + body(ICU_NOTICE),
    ]
    parts += [distribution_paragraph(info) for info in sorted(internal.glob("*.dist-info"))]
    return "\n\n".join(parts) + "\n"


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    sys.stdout.write(copyright_file(Path(sys.argv[1]), Path(sys.argv[2])))
