"""No import cycles inside forkwise.core: every module can be read (and loaded) after the
modules it imports. A cycle is how layers quietly start to depend on each other."""

from __future__ import annotations

import grimp


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


def test_forkwise_core_has_no_import_cycle() -> None:
    cycles = _cycles("forkwise.core")
    assert cycles == [], "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)
