"""litloop's benchmarks: scripts run from the repository (`python -m bench.NAME`), not shipped in
the package. Their figures and commands are in docs/benchmarks.md; the product's own evaluation
(`litloop score`, `litloop eval`) is the `evals` package."""
