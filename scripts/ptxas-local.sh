#!/usr/bin/env bash
# Registers and spills of kernel entries for sm_90 without the GPU machine: NVIDIA's
# `ptxas` from PyPI (the `nvidia-cuda-nvcc-cu12` wheel, downloaded once into
# target/ptxas-local/) assembles each entry as the CUDA backend loads it, a module of
# its own (`backend/ptx.rs`): the PTX's prelude, the entry, the trailing functions.
#
#   scripts/ptxas-local.sh ENTRY[,ENTRY...] [CAP] [PTX]
#       ENTRY  entry names, e.g. stream_collide_odd_d3q19_f32_bgk (see the registry)
#       CAP    a register cap (.maxnreg) to apply, as REGISTER_CAPS does at load time
#       PTX    a PTX text (default: the committed crates/ramus/ptx/ramus_kernels.ptx.zst)
#   PTXAS_SASS=DIR scripts/ptxas-local.sh ...
#       also writes each entry's machine code to DIR/ENTRY.sass (`nvdisasm` from the
#       `nvidia-cuda-nvdisasm` wheel, CUDA 13), to count what a kernel change costs
#
# Prints one line per entry: its stack frame, spill stores and loads, and registers
# (`ptxas -v`). The module is declared PTX ISA 7.8 / sm_90, as for programmatic dependent
# launch on Hopper. It needs python3, pip and zstd; PyPI must be reachable the first time.
# Device figures (the JIT of the driver on the GPU machine) may differ by a few registers
# from this ptxas's (CUDA 12.9).
set -euo pipefail
[[ $# -ge 1 ]] || { sed -n '2,19p' "$0" >&2; exit 2; }
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
entries=$1
cap=${2:-}
tools=$root/target/ptxas-local
ptxas=$tools/nvidia/cuda_nvcc/bin/ptxas
if [[ ! -x $ptxas ]]; then
    mkdir -p "$tools"
    python3 -m pip download --quiet --no-deps -d "$tools" nvidia-cuda-nvcc-cu12
    python3 -m zipfile -e "$tools"/nvidia_cuda_nvcc_cu12-*.whl "$tools"
    chmod +x "$ptxas"
fi
sass=${PTXAS_SASS:-}
nvdisasm=$tools/nvidia/cu13/bin/nvdisasm
if [[ -n $sass && ! -x $nvdisasm ]]; then
    python3 -m pip download --quiet --no-deps -d "$tools" nvidia-cuda-nvdisasm
    python3 -m zipfile -e "$tools"/nvidia_cuda_nvdisasm-*.whl "$tools"
    chmod +x "$nvdisasm"
fi
[[ -z $sass ]] || mkdir -p "$sass"
ptx=$(mktemp)
module=$(mktemp)
trap 'rm -f "$ptx" "$module" "$module.cubin"' EXIT
if [[ $# -ge 3 ]]; then
    cp "$3" "$ptx"
else
    zstd -q -dc "$root/crates/ramus/ptx/ramus_kernels.ptx.zst" > "$ptx"
fi
python3 - "$ptx" "$entries" "$cap" "$module" "$ptxas" "$sass" "$nvdisasm" <<'PY'
import re, subprocess, sys

path, names, cap, module, ptxas, sass, nvdisasm = sys.argv[1:8]
text = open(path).read()
ENTRY = "\n.visible .entry "
starts = [m.start() + 1 for m in re.finditer(re.escape(ENTRY), text)]
if not starts:
    sys.exit("no entry point in " + path)
# The trailing functions start at the first `.func` after the last entry (ptx.rs).
i = text.find("\n.func ", starts[-1])
tail = len(text) if i < 0 else i + 1
entries = {}
for k, s in enumerate(starts):
    e = starts[k + 1] if k + 1 < len(starts) else tail
    entries[text[s + len(ENTRY) - 1 : e].split("(")[0].strip()] = (s, e)
prelude = text[: starts[0]]
prelude = re.sub(r"^\.version \d+\.\d+$", ".version 7.8", prelude, count=1, flags=re.M)
prelude = prelude.replace("\n.target sm_70\n", "\n.target sm_90\n", 1)
failed = False
for name in names.split(","):
    if name not in entries:
        print(f"{name}: no such entry", file=sys.stderr)
        failed = True
        continue
    s, e = entries[name]
    body = text[s:e]
    if cap:
        at = body.find("\n{\n")
        body = body[:at] + f"\n.maxnreg {cap}" + body[at:]
    open(module, "w").write(prelude + body + text[tail:])
    cubin = module + ".cubin"
    r = subprocess.run([ptxas, "-v", "--gpu-name", "sm_90", "-o", cubin, module], capture_output=True, text=True)
    info = [l.split("ptxas info    : ")[-1].strip() for l in r.stderr.splitlines() if "registers" in l or "spill" in l]
    if r.returncode != 0 or not info:
        print(f"{name}: ptxas failed: {r.stderr.strip()}", file=sys.stderr)
        failed = True
        continue
    print(f"{name}{' (cap ' + cap + ')' if cap else ''}: " + "; ".join(info))
    if sass:
        with open(f"{sass}/{name}.sass", "w") as out:
            subprocess.run([nvdisasm, "-c", cubin], stdout=out, stderr=subprocess.DEVNULL, check=True)
sys.exit(1 if failed else 0)
PY
