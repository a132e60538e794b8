#!/usr/bin/env bash
# Distributed runs against one process, on this machine: for blur, local_laplacian,
# transpose, wavelet, camera_pipe, bilateral_grid, interpolate and hist_eq at their benchmark
# sizes, the hand schedule as one process with 2 threads, the
# distributed schedule as 1 rank x 2 threads and as 2 ranks x 1 thread, and the bytes the
# ranks sent against the ghost-zone formula. Parallel efficiency = one process's time /
# 2 ranks' time. Needs Open MPI (mpirun) and the `mpi` feature's example:
#   cargo build --release -p halogen-apps --features mpi --example distributed_bench
#   bash bench/mpi_scaling.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${1:-10}"
BIN=target/release/examples/distributed_bench
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN=(mpirun --oversubscribe --bind-to none --mca btl self,vader)
for spec in "blur 6400 4800 distributed_exchange" "blur 6400 4800 distributed" \
    "local_laplacian 2560 1536 distributed" "transpose 4096 4096 distributed" \
    "transpose 4096 4096 distributed_columns" "wavelet 2048 1536 distributed" \
    "camera_pipe 2592 1968 distributed" "bilateral_grid 2560 1536 distributed" \
    "interpolate 3072 2048 distributed" "hist_eq 4000 3000 distributed" "hist_eq 4000 3000 distributed_strips"; do
    set -- $spec
    app=$1 w=$2 h=$3 sched=$4
    "${MPIRUN[@]}" -np 1 -x HALOGEN_NUM_THREADS=2 "$BIN" "$app" "$w" "$h" hand "$RUNS"
    "${MPIRUN[@]}" -np 1 -x HALOGEN_NUM_THREADS=2 "$BIN" "$app" "$w" "$h" "$sched" "$RUNS"
    "${MPIRUN[@]}" -np 2 -x HALOGEN_NUM_THREADS=1 "$BIN" "$app" "$w" "$h" "$sched" "$RUNS"
done
