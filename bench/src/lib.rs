//! Benchmarks of idforge against its peers and the floors; see `benches/` and `bench/bench.sh`.
