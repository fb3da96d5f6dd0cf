#!/usr/bin/env python3
"""Draws `shoal bench-snap` results in the shape of Snap's Figure 8: one panel
per application, throughput (Gbps over frame bytes) against packet size for
the CPU configuration and the offloaded one without and with ROI slicing (the
largest aggregate), with the trivial forwarder as a reference line.
Usage: bench/snap_chart.py results.json chart.png"""
import json
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    res = json.load(open(sys.argv[1]))
    rows = res["results"]
    apps = [a for a in dict.fromkeys(r["app"] for r in rows) if a != "forward"]
    batch = max([r.get("batch", 0) for r in rows] or [0])
    fwd = {r["size"]: r["gbps"] for r in rows if r["app"] == "forward"}
    fig, axes = plt.subplots(1, max(1, len(apps)), figsize=(4.2 * max(1, len(apps)), 3.6), squeeze=False)
    styles = [("cpu", "CPU", "o-"), ("offload-noslice", "offloaded, no ROI slicing", "s--"),
              ("offload", "offloaded, ROI slicing", "^-")]
    for ax, app in zip(axes[0], apps):
        for mode, label, fmt in styles:
            pts = sorted((r["size"], r["gbps"]) for r in rows
                         if r["app"] == app and r["mode"] == mode and r.get("batch", batch) == batch)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], fmt, label=label)
        if fwd:
            s = sorted(fwd)
            ax.plot(s, [fwd[x] for x in s], ":", color="gray", label="trivial forwarder")
        ax.set_title(app)
        ax.set_xlabel("packet size (bytes)")
        ax.set_xscale("log", base=2)
        ax.set_xticks(sorted({r["size"] for r in rows}))
        ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("throughput (Gbps)")
    axes[0][0].legend(fontsize=7)
    dev = res.get("device", {}).get("detail") or res.get("offload_device", "")
    fig.suptitle("shoal bench-snap, commit %s, %s; offloaded: %s, aggregates of %d" %
                 (res.get("commit", "?"), res.get("machine", {}).get("cpu", "?"), dev, batch), fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=120)
    print("wrote", sys.argv[2])


if __name__ == "__main__":
    main()
