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
# A number rounded to $2 decimals ("n/a" for null or missing: the example writes a value
# that is not available, e.g. no shedding in the window, as null).
num() { awk -v v="$1" -v d="$2" 'BEGIN { if (v == "" || v == "null") print "n/a"; else printf "%.*f", d, v }'; }
for spec in "$@"; do
    IFS=: read -r root levels interp height <<<"$spec"
    height=${height:-32}
    dir="$out/cyl-$root-$levels-$interp-h$height"
    mkdir -p "$dir"
    start=$SECONDS
    if .gpu/cylinder --root "$root" --levels "$levels" --interp "$interp" --time "$time" --height "$height" --precision f64 \
        --backend cuda --no-vtu --out "$dir" >"$dir/run.log" 2>&1; then
        s="$dir/summary.json"
        printf 'root %4s levels %s %-6s H %2s D  C_D %-7s St %-7s wall %7s s  MLUPS %6s  adapt %5s %%  cells %s\n' \
            "$root" "$levels" "$interp" "$height" "$(num "$(field cd_mean "$s")" 4)" "$(num "$(field strouhal "$s")" 4)" \
            "$(num "$(field wall_time_s "$s")" 1)" "$(num "$(field mlups "$s")" 0)" \
            "$(awk -v a="$(field adaptation_share "$s")" 'BEGIN { printf "%.2f", 100 * a }')" \
            "$(tr -d ' \n' <"$s" | grep -o '"cells_per_level":\[[^]]*\]' | sed 's/.*://')" | tee -a "$out/cylinder.txt"
    else
        echo "root $root levels $levels $interp: FAILED (exit status $?, see the example's exit codes) after $((SECONDS - start)) s: $(tail -c 300 "$dir/run.log")" | tee -a "$out/cylinder.txt"
    fi
done
