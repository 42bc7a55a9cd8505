//! Benchmarks of idforge against its peers and the floors; see `benches/` and `ci/bench/bench.sh`.
