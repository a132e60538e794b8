//! Benchmark pipelines written with Halogen.
