# Benchmarks: see tests/bench/README.md
