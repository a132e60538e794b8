#!/usr/bin/env bash
# The GPU back end on one machine: each app's GPU schedules on a GPU target against its
# CPU `hand` schedule, all from `halogen bench` (whole `realize` calls, host buffers in and
# out: the copies to and from the device are in the GPU's time), then each GPU schedule
# again with its images kept in device memory (`--device-buffers`: the kernels' time and
# their share of a device-to-device copy's bandwidth), then with HALOGEN_GPU_PROFILE=1,
# whose per-event times give each kernel's own time; last, a large copy through PyTorch
# where it is installed, as a cross-check of the copy's bandwidth.
#
#   bench/gpu_bench.sh HALOGEN_BINARY [TARGET] [APPS...]
#   bench/gpu_bench.sh target/release/halogen host-cuda blur sobel transpose
#   GPU_SCHEDULES=gpu,auto bench/gpu_bench.sh target/release/halogen host-cuda camera_pipe
#
# An app may be a `.halogen` pipeline file (with schedules of its own, named in
# GPU_SCHEDULES). GPU_SCHEDULES (default `gpu`) lists the GPU schedules, comma-separated;
# `auto` is the auto-scheduler for the target. SIZE (e.g. 6400x4800) overrides the apps'
# benchmark sizes. The binary needs the cargo feature `cuda`
# for host-cuda. Kernels compile with NVRTC on first use (libnvrtc.so on LD_LIBRARY_PATH)
# or come from the kernel cache (HALOGEN_CACHE_DIR), which `halogen lower APP --schedule S
# --target host-cuda --compile-kernels` fills on a machine with NVRTC and no GPU.
set -uo pipefail
BIN="$1"
TARGET="${2:-host-cuda}"
shift 2 || shift $#
APPS=("$@")
[ ${#APPS[@]} -gt 0 ] || APPS=(blur sobel transpose)
SCHEDULES="${GPU_SCHEDULES:-gpu}"
LOG="$(mktemp -d)"
echo "machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo 'no nvidia-smi'), $(nproc) cores"
for app in "${APPS[@]}"; do
    "$BIN" bench "$app" ${SIZE:+--size "$SIZE"} --schedule "hand,$SCHEDULES" --target "$TARGET" --runs 10 --check 2>&1 | tail -n +2
    # Images kept in device memory: the run's kernels against a device-to-device copy of
    # the bytes the pipeline moves (the `kernel ms`, `copy GB/s` and `of copy` columns).
    "$BIN" bench "$app" ${SIZE:+--size "$SIZE"} --schedule "$SCHEDULES" --target "$TARGET" --runs 10 --check \
        --device-buffers 2>&1 | tail -n +2
    for s in ${SCHEDULES//,/ }; do
        HALOGEN_GPU_PROFILE=1 "$BIN" bench "$app" ${SIZE:+--size "$SIZE"} --schedule "$s" --target "$TARGET" --runs 5 --check \
            >/dev/null 2>"$LOG/prof"
        echo "  $s:"
        # The fastest of each event over the runs.
        sed -n 's/^halogen gpu: //p' "$LOG/prof" | awk '{
            t = $(NF - 1); $NF = ""; $(NF - 1) = ""; k = $0
            if (!(k in m) || t < m[k]) m[k] = t
        } END { for (k in m) printf "    %-44s %9.3f ms\n", k, m[k] }' | sort
    done
done
python3 - <<'PY' 2>/dev/null || echo "device-to-device copy: not measured (no PyTorch with CUDA)"
import time, torch
n = 256 * 1024 * 1024
a = torch.empty(n, dtype=torch.uint8, device="cuda")
b = torch.empty_like(a)
for _ in range(3):
    b.copy_(a)
torch.cuda.synchronize()
t = time.perf_counter()
for _ in range(20):
    b.copy_(a)
torch.cuda.synchronize()
dt = (time.perf_counter() - t) / 20
print(f"device-to-device copy of {n >> 20} MiB: {dt * 1e3:.3f} ms, {2 * n / dt / 1e9:.0f} GB/s read + write")
PY
