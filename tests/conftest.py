"""Shared pytest configuration."""

# --- benchmarks: fixtures (bench_device, limits) and pytest-benchmark hooks --------------------
pytest_plugins = ("verify.bench_plugin",)
# --- end benchmarks ----------------------------------------------------------------------------
