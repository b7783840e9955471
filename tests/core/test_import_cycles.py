"""No import cycles inside forkwise.core or forkwise.gui: every module can be read (and
loaded) after the modules it imports. A cycle is how layers quietly start to depend on each
other. Imports made only for type checking count too: they are how the GUI's modules once
all came to depend on the main window's."""

from __future__ import annotations

import grimp
import pytest


def _cycles(package: str) -> list[list[str]]:
    graph = grimp.build_graph(package)
    found: list[list[str]] = []
    for importer in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            if not imported.startswith(package + ".") or imported == importer:
                continue
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back is not None:
                found.append([importer, *back])
    return found


@pytest.mark.parametrize("package", ["forkwise.core", "forkwise.gui"])
def test_no_import_cycle(package: str) -> None:
    cycles = _cycles(package)
    assert cycles == [], "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)
