#!/usr/bin/env python3
"""Reads a kernel timeline (`cavity --kernel-timeline N`: OUT/kernel_timeline.csv) and
prints its launches, each the pair of its first and last CTA's records, in the order their
first CTA passed its wait, with the gap from the latest end before it; then per kernel the
launches and the median time from the first CTA's wait to the launch's end.

    scripts/kernel-timeline.py OUT/kernel_timeline.csv [FROM_US [TO_US]]

FROM_US / TO_US limit the listing (not the summary) to launches whose first CTA passed its
wait in that window (µs from the timeline's first start). Times are of the probed CTAs
(thread 0 of the first and the last CTA), so a launch may end a little after its "end".
"""
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
    window = [float(a) for a in sys.argv[2:4]] + [float("inf")] * (4 - len(sys.argv[1:4]))
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


if __name__ == "__main__":
    main()
