#!/usr/bin/env python3
"""Reads a kernel timeline (`cavity --kernel-timeline N`: OUT/kernel_timeline.csv) and
prints its launches, each the pair of its first and last CTA's records, in the order their
first CTA passed its wait, with the gap from the latest end before it; then per kernel the
launches and the median time from the first CTA's wait to the launch's end; then the
critical path and the root steps.

    scripts/kernel-timeline.py OUT/kernel_timeline.csv [FROM_US [TO_US]]

FROM_US / TO_US limit the listing (not the summaries) to launches whose first CTA passed
its wait in that window (µs from the timeline's first start; default: all). Times are of
the probed CTAs (thread 0 of the first and the last CTA), so a launch may end a little
after its "end".

Critical path (an estimate from the times alone): from the launch that ends last, back
through the launch that ended latest before each one passed its wait; per step of that
path (kernel before -> kernel, each with its CTA count), how often it occurs, the median
gap from the one's end to the other's wait and the median run of the second. Root steps:
the spacing of the waits of the step kernel with the fewest CTAs (the coarsest level's
step, once per root step, if no finer level has as few blocks). Device idle: the spans of
more than IDLE_US (8 µs) in which no probed launch had started and not ended, grouped by
the kernel that ended before and the one that started after: where the host, not the
device, paced the run (the guard's check and the adaptation's launches and waits, the
graph update after an adaptation, and its first replay's upload). Launches of one CTA
count as running from their start to their end, others from their first CTA's start to
the later CTA's end.
"""
import bisect
import collections
import csv
import statistics
import sys


def launches(path):
    """One dict per launch: name, ctas, start, start_last, wait (first CTA), end."""
    opened = collections.defaultdict(lambda: (collections.deque(), collections.deque()))
    out = []
    num = lambda v: float(v) if v else None
    for r in csv.DictReader(open(path)):
        name, cta, ctas = r["kernel"], int(r["cta"]), int(r["ctas"])
        rec = (num(r["start_us"]), num(r["waited_us"]), num(r["end_us"]))
        if ctas == 1:
            out.append(dict(name=name, ctas=1, start=rec[0], start_last=rec[0], wait=rec[1], end=rec[2]))
            continue
        # The two records of a launch come in either order: pair each with the oldest
        # unpaired record of the other kind of the same kernel and CTA count.
        firsts, lasts = opened[(name, ctas)]
        mine, other = (firsts, lasts) if cta == 0 else (lasts, firsts)
        if not other:
            mine.append(rec)
            continue
        o = other.popleft()
        first, last = (rec, o) if cta == 0 else (o, rec)
        ends = [e for e in (first[2], last[2]) if e is not None]
        out.append(dict(name=name, ctas=ctas, start=first[0], start_last=last[0], wait=first[1],
                        end=max(ends) if ends else None))
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    bounds = [float(a) for a in sys.argv[2:4]]
    window = (bounds[0] if bounds else float("-inf"), bounds[1] if len(bounds) > 1 else float("inf"))
    ls = sorted(launches(sys.argv[1]), key=lambda l: l["wait"] if l["wait"] is not None else l["start"])
    print(f"{'kernel':48} {'CTAs':>6} {'start':>10} {'last CTA':>10} {'wait':>10} {'end':>10} {'gap':>6}")
    latest = None
    for l in ls:
        at = l["wait"] if l["wait"] is not None else l["start"]
        if window[0] <= at < window[1]:
            gap = f"{at - latest:6.2f}" if latest is not None else ""
            f = lambda v: f"{v:10.2f}" if v is not None else f"{'':10}"
            print(f"{l['name'][:48]:48} {l['ctas']:6} {f(l['start'])} {f(l['start_last'])} {f(l['wait'])} {f(l['end'])} {gap}")
        if l["end"] is not None:
            latest = max(latest or l["end"], l["end"])
    print(f"\n{'kernel':48} {'CTAs':>6} {'launches':>8} {'wait -> end, median µs':>24}")
    groups = collections.defaultdict(list)
    for l in ls:
        if l["wait"] is not None and l["end"] is not None:
            groups[(l["name"], l["ctas"])].append(l["end"] - l["wait"])
    for (name, ctas), runs in sorted(groups.items(), key=lambda kv: -sum(kv[1])):
        print(f"{name[:48]:48} {ctas:6} {len(runs):8} {statistics.median(runs):24.2f}")
    done = [l for l in ls if l["wait"] is not None and l["end"] is not None]
    if done:
        critical_path(done)
        root_steps(done)
        device_idle(done)


def critical_path(done):
    """The chain of launches, each released by the one that ended latest before its wait."""
    by_end = sorted(done, key=lambda l: l["end"])
    ends = [l["end"] for l in by_end]
    path = [by_end[-1]]
    while True:
        # Strictly before: a launch may end at the very time it passed its wait.
        i = bisect.bisect_left(ends, path[-1]["wait"]) - 1
        if i < 0:
            break
        path.append(by_end[i])
    path.reverse()
    runs = sum(l["end"] - l["wait"] for l in path)
    total = path[-1]["end"] - path[0]["wait"]
    print(f"\ncritical path: {len(path)} launches, {total:.1f} µs from the first wait to the last end: "
          f"{runs:.1f} µs running, {total - runs:.1f} µs in gaps")
    steps = collections.defaultdict(list)
    for a, b in zip(path, path[1:]):
        steps[(a["name"], a["ctas"], b["name"], b["ctas"])].append((b["wait"] - a["end"], b["end"] - b["wait"]))
    print(f"{'kernel before':40} {'CTAs':>6}  {'kernel':40} {'CTAs':>6} {'times':>6} {'gap µs':>7} {'run µs':>7}")
    for (an, ac, bn, bc), v in sorted(steps.items(), key=lambda kv: -sum(g + r for g, r in kv[1])):
        gap, run = statistics.median(g for g, _ in v), statistics.median(r for _, r in v)
        print(f"{an[:40]:40} {ac:6}  {bn[:40]:40} {bc:6} {len(v):6} {gap:7.2f} {run:7.2f}")


def root_steps(done):
    """Spacing of the coarsest level's steps (the step kernel launched with fewest CTAs)."""
    steps = [l for l in done if l["name"].startswith("stream_collide")]
    if not steps:
        return
    fewest = min(l["ctas"] for l in steps)
    waits = sorted(l["wait"] for l in steps if l["ctas"] == fewest)
    spans = [b - a for a, b in zip(waits, waits[1:])]
    if spans:
        print(f"\nroot steps (steps of {fewest} CTAs): {len(spans)} spans, median {statistics.median(spans):.1f} µs, "
              f"mean {statistics.mean(spans):.1f} µs")


IDLE_US = 8.0


def device_idle(done):
    """Spans longer than IDLE_US with no launch running, by the kernels around them."""
    spans = []
    busy_end, before = None, None
    for l in sorted(done, key=lambda l: l["start"]):
        if busy_end is not None and l["start"] - busy_end > IDLE_US:
            spans.append((before, l["name"], l["start"] - busy_end))
        if busy_end is None or l["end"] > busy_end:
            busy_end, before = l["end"], l["name"]
    if not spans:
        return
    first = min(l["start"] for l in done)
    total = sum(s for _, _, s in spans)
    print(f"\ndevice idle over {IDLE_US:.0f} µs: {len(spans)} spans, {total:.1f} µs of {busy_end - first:.1f} µs")
    groups = collections.defaultdict(list)
    for a, b, span in spans:
        groups[(a, b)].append(span)
    print(f"{'kernel before':44} {'kernel after':44} {'times':>6} {'median µs':>10} {'sum µs':>8}")
    for (a, b), v in sorted(groups.items(), key=lambda kv: -sum(kv[1])):
        print(f"{a[:44]:44} {b[:44]:44} {len(v):6} {statistics.median(v):10.2f} {sum(v):8.1f}")


if __name__ == "__main__":
    main()
