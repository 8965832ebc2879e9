#!/usr/bin/env bash
# The guide's tutorial from a fresh project, as a user follows it (docs/guide.md, section
# 1, "The same run from your own code"): `cargo new`, `cargo add ramus --path …`, the
# guide's Rust example as `src/main.rs`, `cargo run --release`; then checks the files it
# says it writes. Run by .ci/run after the tests; CARGO_TARGET_DIR may point at the
# workspace's target folder to reuse its compiled dependencies.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
cargo new --quiet --bin guide-tutorial
cd guide-tutorial
cargo add --quiet ramus --path "$repo/crates/ramus"
# The workspace's dependency versions (cargo drops the ones this project does not use).
cp "$repo/Cargo.lock" .
# The first Rust block of the guide, without rustdoc's hidden lines, as the body of main.
{
    echo 'fn main() -> Result<(), ramus::Error> {'
    awk '/^```rust$/ && !done { inside = 1; next } inside && /^```$/ { done = 1; inside = 0 } inside && !/^# / { print }' \
        "$repo/docs/guide.md"
    echo '    Ok(())'
    echo '}'
} > src/main.rs
grep -q 'Forest::<D3, D3Q19, f32>::new' src/main.rs || { echo "error: the guide's example was not found" >&2; exit 1; }
out=$(mktemp -d)
TMPDIR=$out cargo run --quiet --release
for f in fields.pvd fields_0000.vthb fields_0004.vthb final.vthb; do
    [[ -s $out/ramus-guide/$f ]] || { echo "error: $f not written" >&2; exit 1; }
done
rm -rf "$out"
echo "guide tutorial: a fresh project builds and runs the guide's example"
