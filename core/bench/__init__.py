"""Benchmarks: `python -m forkwise.core.bench [--quick] [--json]`.

Every figure is reported as a ratio against a baseline measured in the same run, because
the machine is shared and noisy; nothing here asserts a time.
"""
