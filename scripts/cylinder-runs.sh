#!/usr/bin/env bash
# Flow past a square cylinder on the device (issue "Flow past a square cylinder"): runs the
# bundled example (scripts/gpu-check.sh bundle) for each ROOT:LEVELS:INTERP[:HEIGHT] given, f64, to
# CYL_TIME (default 240) D/U0, and prints one line per run from its summary.json.
#
#   scripts/cylinder-runs.sh 256:2:linear 256:2:cubic 2048:1:linear
#
# Outputs in $OUT (default ./gpu-out)/cyl-ROOT-LEVELS-INTERP/ (forces.csv, summary.json) and
# a table in $OUT/cylinder.txt.
set -uo pipefail
out=${OUT:-./gpu-out}
time=${CYL_TIME:-240}
mkdir -p "$out"
field() { grep -o "\"$1\": [^,}]*" "$2" | head -1 | sed 's/.*: //'; }
for spec in "$@"; do
    IFS=: read -r root levels interp height <<<"$spec"
    height=${height:-32}
    dir="$out/cyl-$root-$levels-$interp-h$height"
    mkdir -p "$dir"
    start=$SECONDS
    if .gpu/cylinder --root "$root" --levels "$levels" --interp "$interp" --time "$time" --height "$height" --precision f64 \
        --backend cuda --no-vtu --out "$dir" >"$dir/run.log" 2>&1; then
        s="$dir/summary.json"
        printf 'root %4s levels %s %-6s H %2s D  C_D %-8.5s St %-8.5s wall %7.1f s  MLUPS %6.0f  adapt %5.2f %%  cells %s\n' \
            "$root" "$levels" "$interp" "$height" "$(field cd_mean "$s")" "$(field strouhal "$s")" "$(field wall_time_s "$s")" \
            "$(field mlups "$s")" "$(awk -v a="$(field adaptation_share "$s")" 'BEGIN { print 100 * a }')" \
            "$(tr -d ' \n' <"$s" | grep -o '"cells_per_level":\[[^]]*\]' | sed 's/.*://')" | tee -a "$out/cylinder.txt"
    else
        echo "root $root levels $levels $interp: FAILED after $((SECONDS - start)) s: $(tail -c 300 "$dir/run.log")" | tee -a "$out/cylinder.txt"
    fi
done
