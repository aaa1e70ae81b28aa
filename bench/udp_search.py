"""UDP search cost: bisection against the reviews' sweep, on a link capped at 600 Mbit/s.

The Jan 2003 roundup offered iperf UDP at 200, 210, ... 800 Mbit/s and kept the highest
rate received (``sweep``: 61 trials). ``bisect`` looks for the highest offered rate whose
loss stays within 0.1 % at the same 10 Mbit/s resolution. Both run here on the lab pair
``pci32`` (an emulated 32-bit PCI card, shaped to 600 Mbit/s on the wire: 574 Mbit/s of
UDP payload in 1470-byte datagrams) with iperf 2, 1 s per trial, through the engine
``nicbench run`` uses: one sweep, then ``--bisections`` bisections (default 3), since a
single bisection can be thrown off by one noisy probe and one run would hide that.

    PASS when every bisection is within 10 Mbit/s of the sweep and the largest number of
    trials a bisection used is at most 1/5 of the sweep's.

iperf 2 runs with ``-w 2M`` on both ends (capped by net.core.rmem_max/wmem_max): with the
default 208 KB buffer the sender blocks on its socket when the shaper's queue is full
(it then sends less than it offers, with no loss) and the receiver overflows whenever it
is not scheduled for ~10 ms, so loss tracks the host's CPU instead of the link.

The last line is the figure, for machines: ``udp_search: sweep_mbit=... PASS|FAIL``.

    python bench/udp_search.py [-i INVENTORY] [--pair pci32] [--bisections 3] [--out DIR]
"""

from __future__ import annotations

import sys

import pandas as pd

from _common import arguments, run

TOLERANCE_BPS = 10e6
MAX_TRIAL_RATIO = 1 / 5
HEADER = """\
format_version: 1
name: bench-udp-search
source: "nicbench bench/udp_search.py: iXBT Jan 2003 UDP sweep against bisection"
platform: linux
give_up_after: 0
timeout_s: 30
mtu: [1500]
tests:
"""
TEST = """\
  - name: {name}
    tool: iperf2
    protocol: udp
    params: {{duration_s: {d:g}, window: {w}, port: {port}}}
    udp_search: {{method: {method}, start_bps: 200M, stop_bps: 800M, step_bps: 10M,
                 loss_pct: 0.1}}
"""


def mbit(bps: float | None) -> str:
    return "nan" if bps is None or bps != bps else f"{bps / 1e6:.1f}"


def _passes(rec) -> bool:
    from nicbench.config.profile import DEFAULT_LOSS_PCT
    from nicbench.results.policy import passes

    return passes(rec, DEFAULT_LOSS_PCT)


def main() -> int:
    p = arguments(__doc__, pair="pci32")
    p.add_argument("--duration", type=float, default=1.0, help="seconds per trial")
    p.add_argument("--window", default="2M", help="iperf 2 -w, both ends (default 2M)")
    p.add_argument("--bisections", type=int, default=3, help="bisections to run (default 3)")
    args = p.parse_args()
    tests = [("udp-sweep", "sweep")] + [(f"udp-bisect-{i}", "bisect")
                                         for i in range(1, args.bisections + 1)]
    profile = HEADER + "".join(
        TEST.format(name=name, method=method, d=args.duration, w=args.window, port=5483 + i)
        for i, (name, method) in enumerate(tests))
    run_dir, wall, recs = run(profile, args.inventory, args.pair, args.out)
    summary = pd.read_csv(run_dir.summary_file).set_index("test")
    found, trials = {}, {}
    for name, method in tests:
        mine = [r for r in recs if r.test == name]
        trials[name] = len(mine)
        found[name] = summary.loc[name, "selected_bps"] if name in summary.index else None
        failed = [r for r in mine if r.status != "ok"]
        print(f"{name:13} {len(mine):>2} trials in {sum(r.wall_s or 0 for r in mine):5.1f} s,"
              f" found {mbit(found[name])} Mbit/s received"
              + (f"; {len(failed)} trials failed" if failed else ""))
        if method == "sweep":
            top = max((r for r in mine if r.status == "ok"),
                      key=lambda r: r.throughput_bps, default=None)
            if top:
                print(f"{'':13} (received at offered {top.offered_bps / 1e6:.0f} Mbit/s)")
        else:
            print(f"{'':13} offered: " + ", ".join(
                f"{r.offered_bps / 1e6:.0f}{'' if _passes(r) else ' lossy'}" for r in mine))
    print(f"results in {run_dir.path} ({wall:.0f} s)")

    sweep_bps, sweep_trials = found["udp-sweep"], trials["udp-sweep"]
    bisections = [name for name, method in tests if method == "bisect"]

    def diff(name: str) -> float:
        b = found[name]
        if b is None or b != b or sweep_bps is None or sweep_bps != sweep_bps:
            return float("inf")
        return abs(b - sweep_bps)

    within = sum(diff(n) <= TOLERANCE_BPS for n in bisections)
    worst = max((diff(n) for n in bisections), default=float("inf"))
    most = max((trials[n] for n in bisections), default=0)
    ratio = most / sweep_trials if sweep_trials else float("inf")
    verdict = "PASS" if bisections and within == len(bisections) and \
        ratio <= MAX_TRIAL_RATIO else "FAIL"
    print(f"udp_search: sweep_mbit={mbit(sweep_bps)} sweep_trials={sweep_trials} "
          f"bisect_mbit={','.join(mbit(found[n]) for n in bisections)} "
          f"bisect_trials={','.join(str(trials[n]) for n in bisections)} "
          f"within_10mbit={within}/{len(bisections)} worst_diff_mbit={mbit(worst)} "
          f"trial_ratio={ratio:.3f} limit_ratio=0.2 {verdict}")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
