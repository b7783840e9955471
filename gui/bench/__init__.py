"""The GUI figures of the benchmark suite: run by forkwise.core.bench, imported by nothing in
the app."""
