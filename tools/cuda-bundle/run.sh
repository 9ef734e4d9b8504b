#!/bin/sh
# The torchcore CUDA test bundle's one entry point (built by
# `cargo xtask test-cuda --build-only DIR`; see docs/cuda.md).
#
#   ./run.sh [--fake-driver] [--budget SECONDS]
#
# Needs no Rust toolchain: the CUDA driver (libcuda.so.1) for the GPU
# checks, and python3 with torch (CUDA build) for the comparisons against
# PyTorch. NVRTC is found by the binaries themselves (TORCHCORE_NVRTC, CUDA_HOME,
# the library path, the nvidia wheels of the python3 on PATH); this script
# adds that python3's site-packages to the search.
#
# Prints nvidia-smi, the driver, NVRTC and device properties, then runs, all
# within the time budget (default 480 s): every test binary (the GPU suite
# single-threaded), the allocation-trace replay against torch.cuda, and the
# timings against torch. Everything goes to results/ (one log per step,
# timings.txt, torch_timings.txt, targets.txt, replay.json, summary.txt).
# The last line is the summary: `N passed, M failed` (tests and replayed
# traces; `, K skipped` may follow).
#
# --fake-driver runs everything against the bundled fake CUDA driver
# (fake-driver/: device memory is host memory), to check the bundle end to
# end on a machine without a GPU.
#
# Exit status: 0 all passed, 1 something failed or the budget left steps
# out, 3 no CUDA driver/GPU (the GPU checks were skipped; that is said,
# never counted as passed).
set -u
cd "$(dirname "$0")" || exit 1
BUNDLE=$(pwd)
BUDGET=480
FAKE=0
while [ $# -gt 0 ]; do
    case "$1" in
        --fake-driver) FAKE=1 ;;
        --budget) shift; BUDGET=${1:-480} ;;
        *) echo "usage: ./run.sh [--fake-driver] [--budget SECONDS]"; exit 2 ;;
    esac
    shift
done
START=$(date +%s)
HAVE_TIMEOUT=0
command -v timeout > /dev/null 2>&1 && HAVE_TIMEOUT=1
R="$BUNDLE/results"
rm -rf "$R"
mkdir -p "$R"
PASSED=0
FAILED=0
SKIPPED=0
FAILED_STEPS=""
BUDGET_SKIPS=0

log() { echo "$*" | tee -a "$R/summary.txt"; }
left() { echo $((BUDGET - ($(date +%s) - START))); }
# run_step NAME MAX_SECONDS CMD...: runs CMD with a timeout of
# min(MAX_SECONDS, budget left), output to results/NAME.log and stdout.
run_step() {
    name=$1; max=$2; shift 2
    l=$(left)
    [ "$l" -lt "$max" ] && max=$l
    if [ "$max" -le 5 ]; then
        log "==> $name: SKIPPED (time budget spent)"
        SKIPPED=$((SKIPPED + 1))
        BUDGET_SKIPS=$((BUDGET_SKIPS + 1))
        : > "$R/$name.log"
        return 125
    fi
    echo "==> $name (at most ${max}s): $*"
    t0=$(date +%s)
    if [ "$HAVE_TIMEOUT" -eq 1 ]; then
        timeout -k 10 "$max" "$@" > "$R/$name.log" 2>&1
    else
        "$@" > "$R/$name.log" 2>&1
    fi
    s=$?
    cat "$R/$name.log"
    echo "$name $(($(date +%s) - t0)) s (status $s)" >> "$R/step_times.txt"
    [ "$s" -eq 124 ] && log "==> $name: TIMED OUT after ${max}s"
    return $s
}
# libtest's `test result:` lines: add their passed/failed counts.
count_tests() {
    c=$(grep -h '^test result:' "$1" | sed 's/.* \([0-9]*\) passed; \([0-9]*\) failed.*/\1 \2/' |
        awk '{p+=$1; f+=$2} END {print p+0, f+0}')
    echo "$c"
}

{
    echo "torchcore CUDA bundle, $(date -u '+%Y-%m-%d %H:%M:%S UTC'), budget ${BUDGET}s"
    uname -a
    echo "==> nvidia-smi"
    if command -v nvidia-smi > /dev/null 2>&1; then
        nvidia-smi || echo "nvidia-smi failed"
        nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv || true
    else
        echo "nvidia-smi: not found"
    fi
} 2>&1 | tee "$R/system.txt"

PY=""
for p in python3 python; do
    if command -v "$p" > /dev/null 2>&1; then PY=$p; break; fi
done
if [ -n "$PY" ]; then
    # The python's site-packages join NVRTC's search (its nvidia wheels).
    SITES=$("$PY" -c 'import site; print(":".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null)
    if [ -n "$SITES" ]; then
        PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$SITES"
        export PYTHONPATH
    fi
    echo "python: $($PY --version 2>&1) at $(command -v $PY)" | tee -a "$R/system.txt"
else
    echo "python: not found (the comparisons against torch are skipped)" | tee -a "$R/system.txt"
fi

if [ "$FAKE" -eq 1 ]; then
    LD_LIBRARY_PATH="$BUNDLE/fake-driver${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    ALLOC_CUDA_FAKE_DRIVER=1
    TORCHCORE_NVRTC="$BUNDLE/fake-driver/libnvrtc.so"
    export LD_LIBRARY_PATH ALLOC_CUDA_FAKE_DRIVER TORCHCORE_NVRTC
    echo "FAKE DRIVER: $BUNDLE/fake-driver (no real GPU is used)" | tee -a "$R/system.txt"
fi

# The probe: driver, NVRTC, devices; status 3 = no driver/GPU.
ALLOC_CUDA_PROBE_EXIT=1 run_step probe 120 ./bin/alloc-cuda-gpu_probe --exact probe --nocapture --test-threads=1
PROBE=$?
cat "$R/probe.log" >> "$R/system.txt"
GPU=1
if [ "$PROBE" -eq 3 ]; then
    GPU=0
    log "no GPU: no CUDA driver/GPU found; the GPU checks are skipped (the rest still runs)"
elif [ "$PROBE" -ne 0 ]; then
    log "the CUDA probe failed (status $PROBE)"
    FAILED=$((FAILED + 1))
    FAILED_STEPS="$FAILED_STEPS probe"
fi

# Every test binary; the GPU suite last (it holds the timings) and
# single-threaded with its output.
for b in bin/*; do
    name=$(basename "$b")
    case "$name" in
        alloc-cuda-gpu_probe|alloc-cuda-gpu) continue ;;
    esac
    # The fake-driver host spawns itself on a fake driver it compiles; skip
    # it inside a fake-driver run (no compiler needed here).
    run_step "$name" 120 "./$b" --test-threads=2
    s=$?
    [ "$s" -eq 125 ] && continue
    set -- $(count_tests "$R/$name.log")
    PASSED=$((PASSED + $1)); FAILED=$((FAILED + $2))
    if [ "$s" -ne 0 ] && [ "$2" -eq 0 ]; then
        FAILED=$((FAILED + 1))
        FAILED_STEPS="$FAILED_STEPS $name"
    elif [ "$2" -ne 0 ]; then
        FAILED_STEPS="$FAILED_STEPS $name"
    fi
done
run_step alloc-cuda-gpu 240 ./bin/alloc-cuda-gpu --test-threads=1 --nocapture
s=$?
[ "$s" -eq 125 ] && s=0
set -- $(count_tests "$R/alloc-cuda-gpu.log")
PASSED=$((PASSED + $1)); FAILED=$((FAILED + $2))
if [ "$s" -ne 0 ] && [ "$2" -eq 0 ]; then FAILED=$((FAILED + 1)); fi
[ "$s" -ne 0 ] && FAILED_STEPS="$FAILED_STEPS alloc-cuda-gpu"
if [ "$GPU" -eq 1 ] && grep -q 'SKIPPED: no CUDA device' "$R/alloc-cuda-gpu.log"; then
    log "the GPU suite skipped although the probe found a device"
    FAILED=$((FAILED + 1))
fi
grep -h '^TIMING' "$R"/*.log > "$R/timings.txt" 2>/dev/null

# The differential check against torch.cuda and torch's timings.
if [ -n "$PY" ]; then
    # Ours on device 0 (with --fake-driver: the CudaDevice path on the fake
    # driver, given 8 GiB of lazily used host memory); without a GPU on the
    # fake device.
    REPLAY_ARGS=""
    [ "$GPU" -eq 0 ] && REPLAY_ARGS="--fake"
    run_step torch_replay 150 env FAKE_CUDA_MEM_BYTES=8589934592 "$PY" torch_check.py replay bin "$R/replay" $REPLAY_ARGS
    s=$?
    line=$(grep '^replay: [0-9]* passed' "$R/torch_replay.log" | tail -1)
    if [ -n "$line" ]; then
        set -- $(echo "$line" | sed 's/replay: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped/\1 \2 \3/')
        PASSED=$((PASSED + $1)); FAILED=$((FAILED + $2)); SKIPPED=$((SKIPPED + $3))
        [ "$2" -ne 0 ] && FAILED_STEPS="$FAILED_STEPS torch_replay"
    elif [ "$s" -ne 0 ] && [ "$s" -ne 125 ]; then
        FAILED=$((FAILED + 1))
        FAILED_STEPS="$FAILED_STEPS torch_replay"
    fi
    if [ "$GPU" -eq 1 ] && [ "$FAKE" -eq 0 ]; then
        run_step torch_timings 90 "$PY" torch_check.py timings "$R/torch_timings.txt"
        run_step targets 30 "$PY" torch_check.py report "$R/timings.txt" "$R/torch_timings.txt" "$R/targets.txt"
    else
        log "timings against torch: skipped (no GPU)"
    fi
else
    log "replay and timings against torch: skipped (no python3)"
    SKIPPED=$((SKIPPED + 1))
fi

log "elapsed $(($(date +%s) - START)) s of ${BUDGET}s; results in $R"
[ -n "$FAILED_STEPS" ] && log "failed steps:$FAILED_STEPS"
[ "$BUDGET_SKIPS" -ne 0 ] && log "incomplete: $BUDGET_SKIPS steps not run for lack of time (--budget)"
if [ "$FAKE" -eq 1 ]; then
    log "FAKE DRIVER run: nothing here was measured on a GPU"
elif [ "$GPU" -eq 0 ]; then
    log "no GPU: GPU checks skipped"
fi
if [ "$SKIPPED" -gt 0 ]; then
    log "$PASSED passed, $FAILED failed, $SKIPPED skipped"
else
    log "$PASSED passed, $FAILED failed"
fi
[ "$FAILED" -ne 0 ] && exit 1
# Steps the time budget left out: the run is incomplete, not a pass.
[ "$BUDGET_SKIPS" -ne 0 ] && exit 1
[ "$GPU" -eq 0 ] && [ "$FAKE" -eq 0 ] && exit 3
exit 0
