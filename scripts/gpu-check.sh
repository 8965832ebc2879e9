#!/usr/bin/env bash
# GPU checks of ramus, built here and run on a CUDA machine that has no Rust toolchain.
#
#   scripts/gpu-check.sh bundle   # here: build the test binary and the examples into .gpu/
#                                 # and pack them into .gpu.tar.xz (carry that file)
#   scripts/gpu-check.sh run      # on the device, from the repo root with .gpu.tar.xz
#                                 # (unpacked first) or .gpu/ present:
#                                 # CPU-vs-CUDA tests, benchmark, cavity run; logs in $OUT
#                                 # (default ./gpu-out)
#
# `run` executes every step even when an earlier one fails and exits non-zero if any
# step failed. Each step has a time limit (seconds; override through the environment):
# GPU_CHECK_TESTS_TIMEOUT (300), GPU_CHECK_BENCH_TIMEOUT (180), GPU_CHECK_CAVITY_TIMEOUT (60).
set -euo pipefail

usage() {
    echo "usage: $0 bundle|run" >&2
    exit 2
}

[[ $# -eq 1 ]] || usage
mode=$1
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
bundle_dir=.gpu
bundle_archive=.gpu.tar.xz

# Prints the executable of the artifact of kind $1 named $2 from cargo's JSON messages
# on stdin.
artifact() {
    python3 -c '
import json, sys
kind, name = sys.argv[1], sys.argv[2]
exe = None
for line in sys.stdin:
    line = line.strip()
    if not line.startswith("{"):
        continue
    msg = json.loads(line)
    if msg.get("reason") != "compiler-artifact":
        continue
    target = msg.get("target", {})
    if target.get("name") == name and kind in target.get("kind", []) and msg.get("executable"):
        exe = msg["executable"]
if exe is None:
    sys.exit("no executable for %s %s in cargo output" % (kind, name))
print(exe)
' "$1" "$2"
}

bundle() {
    command -v cargo >/dev/null || { echo "error: cargo not found (bundle runs on the build machine)" >&2; exit 2; }
    command -v python3 >/dev/null || { echo "error: python3 not found (needed to read cargo's JSON)" >&2; exit 2; }
    mkdir -p "$bundle_dir"

    # One test binary holds every integration test (tests/main.rs); `run` runs its gpu
    # modules one by one.
    echo "== building the integration tests (release)"
    local json exe
    json=$(cargo test --release --features gpu-tests --test integration --no-run --message-format=json)
    exe=$(artifact test integration <<<"$json")
    install -m 755 "$exe" "$bundle_dir/integration"

    # Optional examples: the adapt benchmark, the forest example, the cylinder, the
    # per-adaptation trace, the Taylor-Green vortex.
    for name in bench_adapt forest cylinder adapt_trace taylor_green; do
        [[ -f examples/$name.rs ]] || continue
        echo "== building examples/$name.rs (release)"
        json=$(cargo build --release --features benchmarks --example "$name" --message-format=json)
        exe=$(artifact example "$name" <<<"$json")
        install -m 755 "$exe" "$bundle_dir/$name"
    done

    echo "== building examples/bench.rs (release)"
    json=$(cargo build --release --features benchmarks --example bench --message-format=json)
    exe=$(artifact example bench <<<"$json")
    install -m 755 "$exe" "$bundle_dir/bench"

    echo "== building examples/cavity.rs (release)"
    if json=$(cargo build --release --example cavity --message-format=json) \
        && exe=$(artifact example cavity <<<"$json"); then
        install -m 755 "$exe" "$bundle_dir/cavity"
    else
        echo "warning: the cavity example did not build; bundling without it" >&2
        rm -f "$bundle_dir/cavity"
    fi

    # The device run carries at most 64 MiB with the working tree: drop the symbols.
    if command -v strip >/dev/null; then
        strip "$bundle_dir"/* 2>/dev/null || true
    fi

    # The PTX as text, for `ptxas -v` on the device (the binaries embed it compressed).
    if command -v zstd >/dev/null; then
        zstd -q -d -f crates/ramus/ptx/ramus_kernels.ptx.zst -o "$bundle_dir/ramus_kernels.ptx"
    else
        echo "warning: zstd not found: bundling without the PTX text (no ptxas report)" >&2
        rm -f "$bundle_dir/ramus_kernels.ptx"
    fi

    echo "== bundle in $bundle_dir/"
    ls -l "$bundle_dir"
    du -sh "$bundle_dir"

    # Packed: the binaries share most of their bytes, which a dictionary as large as the
    # binaries (xz -9: 64 MiB) finds.
    echo "== packing $bundle_archive"
    tar -cf - "$bundle_dir" | xz -9 -T1 >"$bundle_archive.tmp"
    mv "$bundle_archive.tmp" "$bundle_archive"
    local tree archive
    tree=$(git ls-files -z | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1)
    archive=$(stat -c %s "$bundle_archive")
    echo "$bundle_archive: $((archive / 1048576)) MiB; with the tracked files ($((tree / 1048576)) MiB):" \
        "$(((archive + tree) / 1048576)) MiB of the device run's 64 MiB carry limit"
    echo
    echo "Carry $bundle_archive; on the device, from the repo root:  scripts/gpu-check.sh run"
}

# Runs "$@" under a time limit, output to the terminal and to the log $2; records the
# outcome of step $1 in the summary. Never fails itself.
summary=()
failed=0
step() {
    local name=$1 log=$2 limit=$3
    shift 3
    echo
    echo "==================== $name ($(date -u +%H:%M:%S) UTC, limit ${limit}s)"
    echo "\$ $*"
    local start=$SECONDS status
    set +e
    if command -v timeout >/dev/null; then
        timeout -k 10 "$limit" "$@" 2>&1 | tee "$log"
        status=${PIPESTATUS[0]}
    else
        "$@" 2>&1 | tee "$log"
        status=${PIPESTATUS[0]}
    fi
    set -e
    local took=$((SECONDS - start)) outcome
    if [[ $status -eq 0 ]]; then
        outcome="PASS"
    elif [[ $status -eq 124 || $status -eq 137 ]]; then
        outcome="FAIL (timed out after ${limit}s, status $status)"
        failed=1
    else
        outcome="FAIL (exit status $status)"
        failed=1
    fi
    summary+=("$(printf '%-10s %-45s %4ds  log: %s' "$name" "$outcome" "$took" "$log")")
}

run() {
    local out=${OUT:-./gpu-out}
    mkdir -p "$out"
    local missing=0 f
    # The archive, when present, is the bundle to run: unpacked over whatever .gpu/ an
    # earlier run on this machine left.
    if [[ -f $bundle_archive ]]; then
        echo "== unpacking $bundle_archive"
        rm -rf "$bundle_dir"
        tar -xJf "$bundle_archive"
    fi
    for f in integration bench; do
        if [[ ! -f $bundle_dir/$f ]]; then
            echo "error: $bundle_dir/$f missing: run 'scripts/gpu-check.sh bundle' on the build machine first" >&2
            missing=1
        fi
    done
    [[ $missing -eq 0 ]] || exit 2
    chmod +x "$bundle_dir"/* 2>/dev/null || true
    export RUST_BACKTRACE=1
    # The Taylor-Green tests (tests/gpu_taylor_green.rs) write their E(t), eps(t) curves here.
    export RAMUS_TGV_OUT="$out/tgv"

    echo "==================== device"
    if command -v nvidia-smi >/dev/null; then
        nvidia-smi --query-gpu=index,name,driver_version,memory.total,memory.used,clocks.max.sm,clocks.max.mem,power.limit \
            --format=csv 2>&1 | tee "$out/nvidia-smi.txt" || true
        nvidia-smi 2>&1 | tee -a "$out/nvidia-smi.txt" || true
    else
        echo "warning: nvidia-smi not found"
    fi

    # Registers, spills and stack of every kernel, as the driver's JIT will see them.
    if [[ -f $bundle_dir/ramus_kernels.ptx ]] && { command -v ptxas >/dev/null || [[ -x /usr/local/cuda/bin/ptxas ]]; }; then
        local ptxas
        ptxas=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
        echo "==================== ptxas resource usage (sm_90)"
        "$ptxas" -arch=sm_90 -v "$bundle_dir/ramus_kernels.ptx" -o /dev/null 2>&1 \
            | awk '/Compiling entry function/ { name = $7 } /Used/ { sub(/.*Used/, "Used"); print name ": " $0 }' \
            | tee "$out/ptxas.txt" || true
    fi

    # The GPU modules of the integration tests (tests/gpu.rs, tests/gpu_<topic>.rs), one
    # step each; the filter `<module>::` selects one module's tests.
    step "tests" "$out/gpu-tests.log" "${GPU_CHECK_TESTS_TIMEOUT:-300}" \
        "$bundle_dir/integration" --ignored --nocapture --test-threads=1 gpu::
    local t name
    for t in tests/gpu_*.rs; do
        [[ -f $t ]] || continue
        name=$(basename "$t" .rs)
        step "$name" "$out/$name.log" "${GPU_CHECK_TESTS_TIMEOUT:-300}" \
            "$bundle_dir/integration" --ignored --nocapture --test-threads=1 "$name::"
    done
    if [[ -x $bundle_dir/bench_adapt ]]; then
        step "bench_adapt" "$out/bench_adapt.log" "${GPU_CHECK_BENCH_TIMEOUT:-180}" \
            "$bundle_dir/bench_adapt" --out "$out/bench_adapt.md"
    fi
    if [[ -x $bundle_dir/forest ]]; then
        step "forest" "$out/forest.log" 60 "$bundle_dir/forest" --dim 3 --levels 5 --backend cuda --out "$out/forest"
    fi
    if [[ ${GPU_CHECK_SKIP_BENCH:-0} == 1 ]]; then
        summary+=("$(printf '%-10s %-45s' bench "SKIPPED (GPU_CHECK_SKIP_BENCH=1)")")
    else
    step "bench" "$out/bench.log" "${GPU_CHECK_BENCH_TIMEOUT:-180}" \
        "$bundle_dir/bench" --out "$out/bench.md"
    fi
    if [[ -f $bundle_dir/cavity ]]; then
        step "cavity" "$out/cavity.log" "${GPU_CHECK_CAVITY_TIMEOUT:-60}" \
            "$bundle_dir/cavity" --n 128 --passes 2 --backend cuda --out "$out/cavity"
        # The issue's AMR benchmarks (BENCHMARKS.md): 3D cavity Re = 1000, root 64³, 4 levels,
        # D3Q19 f32, linear, adapt every 32, N_start = -3, N_inc = 1, 512 root steps from rest;
        # 2D cavity Re = 1000, root 128², 4 levels, D2Q9 f32, 8192 root steps.
        if [[ ${GPU_CHECK_SKIP_AMR:-0} != 1 ]]; then
            step "amr3d" "$out/amr3d.log" "${GPU_CHECK_BENCH_TIMEOUT:-180}" \
                "$bundle_dir/cavity" --dim 3 --n 64 --levels 4 --re 1000 --lid 0.05 --n-start -3 --n-inc 1 \
                --steps 512 --precision f32 --backend cuda --no-vtu --out "$out/amr3d"
            step "amr3d-prof" "$out/amr3d-profile.log" "${GPU_CHECK_BENCH_TIMEOUT:-180}" \
                "$bundle_dir/cavity" --dim 3 --n 64 --levels 4 --re 1000 --lid 0.05 --n-start -3 --n-inc 1 \
                --steps 512 --precision f32 --backend cuda --no-vtu --profile --out "$out/amr3d-profile"
            step "amr2d" "$out/amr2d.log" "${GPU_CHECK_BENCH_TIMEOUT:-180}" \
                "$bundle_dir/cavity" --dim 2 --n 128 --levels 4 --re 1000 --lid 0.05 --n-start -3 --n-inc 1 \
                --steps 8192 --precision f32 --backend cuda --no-vtu --out "$out/amr2d"
            # The 3D AMR benchmark with 16-bit storage of the populations.
            step "amr3d-f16" "$out/amr3d-f16.log" "${GPU_CHECK_BENCH_TIMEOUT:-180}" \
                "$bundle_dir/cavity" --dim 3 --n 64 --levels 4 --re 1000 --lid 0.05 --n-start -3 --n-inc 1 \
                --steps 512 --precision f32 --storage f16 --backend cuda --no-vtu --out "$out/amr3d-f16"
        fi
        # The example's checkpoints on the GPU (2D cavity, 3 adaptive levels, f64): run to
        # step 2000, versus run to 1000 with a checkpoint and restarted to 2000 on CUDA and
        # on the CPU: the centrelines and the field must be byte-identical.
        if [[ ${GPU_CHECK_SKIP_RESTART:-0} != 1 ]]; then
            step "restart" "$out/restart.log" "${GPU_CHECK_BENCH_TIMEOUT:-180}" bash -c '
                set -e
                c=$1 o=$2
                f="--n 64 --levels 3 --re 1000 --lid 0.1 --refine-every 16 --precision f64"
                $c $f --steps 2000 --backend cuda --out $o/full
                $c $f --steps 1000 --checkpoint-every 1000 --backend cuda --out $o/half
                $c $f --steps 2000 --restart $o/half/checkpoint.ramus --backend cuda --out $o/cuda
                $c $f --steps 2000 --restart $o/half/checkpoint.ramus --backend cpu --out $o/cpu
                for d in cuda cpu; do
                    for file in centerline_u.csv centerline_v.csv cavity.vtu; do
                        cmp $o/full/$file $o/$d/$file
                    done
                    echo "restart on $d: byte-identical to the uninterrupted CUDA run"
                done' restart "$bundle_dir/cavity" "$out/restart"
        fi
        if [[ -n ${GPU_CHECK_GHIA:-} ]]; then
            # Re = 1000, root 128², 4 levels, vorticity criterion: Ghia comparison on the GPU.
            step "ghia128" "$out/ghia128.log" 600 \
                "$bundle_dir/cavity" --n 128 --levels 4 --re 1000 --lid 0.1 --passes 30 --precision f64 \
                --backend cuda --no-vtu --out "$out/ghia128"
        fi
    else
        summary+=("$(printf '%-10s %-45s' cavity "SKIPPED (no $bundle_dir/cavity)")")
    fi

    {
        echo
        echo "==================== summary"
        grep -H '^test result:' "$out"/gpu*.log 2>/dev/null | sed 's/^/tests: /' || true
        # libtest lists the failed tests, indented, after the last "failures:" line.
        local log
        for log in "$out"/gpu*.log; do
            [[ -f $log ]] || continue
            awk '/^failures:$/ { names = ""; on = 1; next }
                 on && /^    [A-Za-z0-9_:]+$/ { names = names " " $1 }
                 /^test result:/ { on = 0 }
                 END { if (names != "") print "failed tests:" names }' "$log" 2>/dev/null || true
        done
        printf '%s\n' "${summary[@]}"
        if [[ $failed -eq 0 ]]; then echo "ALL PASSED"; else echo "SOME STEPS FAILED"; fi
    } | tee "$out/summary.txt"
    exit "$failed"
}

case $mode in
    bundle) bundle ;;
    run) run ;;
    *) usage ;;
esac
