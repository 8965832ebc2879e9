#!/usr/bin/env bash
# A/B timing of one switch of the cavity example on the GPU machine: the issue's AMR
# benchmarks (A1L: 2D, root 128², 4 levels, 8192 root steps; A3L: 3D, root 64³, 4 levels,
# 512 root steps; BENCHMARKS.md, ninth session) run alternately with and without FLAG,
# after warm-up runs that JIT-compile the PTX, and the outputs compared byte for byte.
#
#   scripts/gpu-ab.sh FLAG [REPS]   # e.g. scripts/gpu-ab.sh --no-concurrent-levels 3
#                                   # FLAG may be several switches in one word:
#                                   # "--no-fused-exchanges --no-graph-updates"
#
#   GPU_AB_CAVITY_B=PATH scripts/gpu-ab.sh "" [REPS]
#                                   # two builds instead of a switch: the second runs
#                                   # PATH (another build's cavity), FLAG may be empty
#
# Run from the repo root on the device, after `scripts/gpu-check.sh bundle` here and the
# archive unpacked there (`tar -xJf .gpu.tar.xz`, or `scripts/gpu-check.sh run` once).
# Prints one line per run (MLUPS, virtual MLUPS, stepping and adaptation seconds, graph
# captures and their host time), then per case the medians of both variants and the
# median of the pairs' ratios (second / first) with a 90 % bootstrap interval, for the
# stepping, the adaptation and the run (stepping + adaptation + guard): a change whose
# interval holds zero is not resolved by these runs. Writes it all to $OUT/ab.txt (default ./gpu-out).
# GPU_AB_BACKEND, GPU_AB_A1_STEPS, GPU_AB_A3_STEPS: another backend or fewer steps (a dry
# run of the script on a machine without a GPU: GPU_AB_BACKEND=cpu).
set -euo pipefail
[[ $# -ge 1 ]] || { echo "usage: $0 FLAG [REPS]" >&2; exit 2; }
flag=$1
read -ra flags <<<"$flag"
tag=$(printf '%s\n' "${flags[@]#--}" | paste -sd+)
reps=${2:-3}
cavity=.gpu/cavity
cavity_b=${GPU_AB_CAVITY_B:-$cavity}
[[ -n $tag || $cavity_b != "$cavity" ]] || { echo "error: no switch and no second build: nothing to compare" >&2; exit 2; }
[[ $cavity_b == "$cavity" ]] || tag=${tag:+$tag+}build-b
[[ -x $cavity ]] || { echo "error: $cavity missing (unpack the bundle first)" >&2; exit 2; }
[[ -x $cavity_b ]] || { echo "error: $cavity_b missing" >&2; exit 2; }
command -v python3 >/dev/null || { echo "error: python3 not found" >&2; exit 2; }
out=${OUT:-./gpu-out}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
backend=${GPU_AB_BACKEND:-cuda}
a1="--dim 2 --n 128 --levels 4 --re 1000 --lid 0.05 --n-start -2 --n-inc 1"
a3="--dim 3 --n 64 --levels 4 --re 1000 --lid 0.05 --n-start -3 --n-inc 1"
a1_steps=${GPU_AB_A1_STEPS:-8192}
a3_steps=${GPU_AB_A3_STEPS:-512}
common="--precision f32 --backend $backend --no-vtu --no-plots"

# Prints the summary line of run directory $1 labelled $2 and appends its times to
# $work/runs.tsv.
line() {
    python3 - "$1/summary.json" "$2" "$work/runs.tsv" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
with open(sys.argv[3], "a") as runs:
    case, variant = sys.argv[2].split(" ", 1)
    run = d["wall_seconds"] + d["adaptation_seconds"] + d.get("guard_seconds", 0.0)
    runs.write("%s\t%s\t%.6f\t%.6f\t%.6f\n" % (case, variant, d["wall_seconds"], run, d["adaptation_seconds"]))
updates = d.get("submissions", {}).get("stepping", {}).get("graph_updates", 0)
print("%-14s MLUPS %6.0f  virtual %7.0f  stepping %.3f s  adaptation %.3f s (%.2f %%)  new graphs %d, %d updated (%.3f s)" % (
    sys.argv[2], d["mlups"], d["virtual_mlups"], d["wall_seconds"], d["adaptation_seconds"],
    100 * d["adaptation_share"], d["graph_captures"], updates, d.get("graph_capture_seconds", float("nan"))))
PY
}

# Warm-up: both settings of both cases, so that every module a run uses is compiled.
for case in a1 a3; do
    args=${!case}
    # shellcheck disable=SC2086 # the flags are words without spaces
    steps=${case}_steps
    warm=$((${!steps} < 512 ? ${!steps} : 512))
    "$cavity" $args --steps $warm $common --out "$work/warm" >/dev/null
    # shellcheck disable=SC2086
    "$cavity_b" $args --steps $warm $common "${flags[@]}" --out "$work/warm" >/dev/null
done

{
    echo "A/B of $flag, $reps pairs per case, $(date -u +%FT%TZ), $(nvidia-smi -L 2>/dev/null | head -1)"
    for case in a1 a3; do
        steps=${case}_steps
        args="${!case} --steps ${!steps}"
        for r in $(seq "$reps"); do
            for v in default "$tag"; do
                dir=$work/$case-$r-$v
                extra=("${flags[@]}")
                bin=$cavity_b
                [[ $v == default ]] && extra=() && bin=$cavity
                # shellcheck disable=SC2086
                "$bin" $args $common "${extra[@]}" --out "$dir" >/dev/null
                line "$dir" "$case $v"
            done
            if cmp -s "$work/$case-$r-default/centerline_u.csv" "$work/$case-$r-$tag/centerline_u.csv"; then
                echo "$case pair $r: centerline_u.csv byte-identical ($(md5sum <"$work/$case-$r-default/centerline_u.csv" | cut -c1-8))"
            else
                echo "$case pair $r: centerline_u.csv DIFFERS"
            fi
        done
    done
    # Medians, and the pairs' ratios with a bootstrap interval of their median (the pairs
    # ran alternately, so a drift of the machine shows in both of a pair).
    python3 - "$work/runs.tsv" "$tag" <<'PY'
import collections, random, statistics, sys
runs = collections.defaultdict(lambda: collections.defaultdict(list))
for line in open(sys.argv[1]):
    case, variant, stepping, run, adaptation = line.split("\t")
    runs[case][variant].append((float(stepping), float(run), float(adaptation)))
random.seed(1)
for case, by in runs.items():
    a, b = by.get("default", []), by.get(sys.argv[2], [])
    n = min(len(a), len(b))
    if n == 0:
        continue
    for k, what in enumerate(("stepping", "run", "adapt")):
        ratios = [b[i][k] / a[i][k] for i in range(n)]
        boot = sorted(statistics.median(random.choices(ratios, k=n)) for _ in range(2000))
        lo, hi = boot[int(0.05 * len(boot))], boot[int(0.95 * len(boot)) - 1]
        print("%s %-8s medians %.4f / %.4f s; second / first %+.2f %% (90 %% interval %+.2f … %+.2f %%, %d pairs)" % (
            case, what, statistics.median(x[k] for x in a[:n]), statistics.median(x[k] for x in b[:n]),
            100 * (statistics.median(ratios) - 1), 100 * (lo - 1), 100 * (hi - 1), n))
PY
} | tee "$out/ab.txt"
