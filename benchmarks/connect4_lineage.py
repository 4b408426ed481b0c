"""Redraws benchmarks/connect4-champion-lineage.png: the shipped connect4 champion's whole lineage, raw-policy
and search-600 mistakes against self-play simulations and wall hours. The data are the tables of
docs/results/connect4-strength.md (the run folders that made them are not kept).

Usage: python benchmarks/connect4_lineage.py benchmarks/connect4-champion-lineage.png"""

import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import matplotlib.ticker

# (label, [(sims M, wall h, raw mean % over End-Easy, Middle-Easy, Middle-Medium, Begin-Easy)])
segments = [
    (
        "600 games, 4 epochs, (z+q)/2 (200 positions a set)",
        [(0, 0, 34.1), (6.94, 0.99, 8.25), (8.93, 1.24, 7.875), (11.01, 1.83, 6.375), (13.20, 2.14, 6.25)],
    ),
    (
        "cosine rate",
        [(13.20, 2.14, 7.1), (15.37, 2.25, 7.3), (17.55, 2.44, 6.9), (19.71, 2.61, 7.2), (21.81, 2.81, 6.8)],
    ),
    ("2,000 games, 1 pass", [(21.81, 2.81, 6.8), (28.56, 2.88, 6.7), (35.63, 2.97, 6.9)]),
    (
        "temperature 0.4 after ply 6",
        [
            (35.63, 2.97, 6.9),
            (42.20, 3.11, 6.3),
            (48.91, 3.33, 6.2),
            (55.56, 3.52, 6.0),
            (62.62, 3.75, 5.5),
            (68.94, 3.98, 5.0),
            (75.08, 4.14, 5.4),
        ],
    ),
    (
        "merged positions",
        [
            (75.08, 4.14, 5.4),
            (81.24, 4.26, 5.0),
            (87.20, 4.45, 4.5),
            (93.06, 4.65, 4.5),
            (98.82, 4.86, 4.5),
            (104.51, 5.06, 4.0),
        ],
    ),
    (
        "random openings (24 plies)",
        [
            (104.51, 5.06, 4.0),
            (107.42, 5.20, 4.125),
            (110.22, 5.33, 3.825),
            (113.07, 5.48, 3.7),
            (115.90, 5.64, 3.575),
            (118.80, 5.92, 3.25),
            (121.74, 6.21, 3.35),
            (124.60, 6.52, 3.425),
            (127.49, 6.76, 2.975),
            (130.40, 6.91, 3.3),
        ],
    ),
    (
        "forced playouts k=2",
        [
            (130.40, 6.91, 3.3),
            (133.31, 7.18, 3.275),
            (136.18, 7.49, 3.05),
            (139.05, 7.80, 3.15),
            (141.90, 8.08, 2.7),
            (144.77, 8.38, 2.625),
            (147.65, 8.75, 2.775),
        ],
    ),
]
# Each shipped champion with search at 600 simulations: mean % over all five sets (200 positions a set
# for the first three, 1,000 after).
champions = [
    (0, 0, 4.8),
    (6.94, 0.99, 3.3),
    (13.20, 2.14, 2.4),
    (21.81, 2.81, 1.8),
    (68.94, 3.98, 1.4),
    (104.51, 5.06, 0.9),
    (127.49, 6.76, 0.6),
    (144.77, 8.38, 0.46),
]


def log_axis(ax, values):
    """Log scale with plain-number ticks: the curves span a decade, the reader wants percentages."""
    ax.set_yscale("log")
    ax.grid(alpha=0.3, which="both")
    ax.set_yticks(values, [f"{v:g}" for v in values])
    ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())


fig, axes = plt.subplots(2, 2, figsize=(11, 7), sharey="row")
for col, idx in enumerate((0, 1)):
    ax = axes[0][col]
    for label, pts in segments:
        ax.plot([p[idx] for p in pts], [p[2] for p in pts], "o-", ms=3, label=label)
    ax.axhline(3.25, color="black", ls=":", label="depth-5 minimax (3.25)")
    log_axis(ax, [2.5, 3, 4, 6, 10, 20, 35])
    ax = axes[1][col]
    ax.plot(
        [c[idx] for c in champions],
        [c[2] for c in champions],
        "s-",
        color="tab:red",
        label="shipped champion, search 600",
    )
    ax.axhline(4.06, color="black", ls=":", label="depth-5 minimax (4.06)")
    ax.axhline(0.94, color="green", ls="--", label="AlphaZero.jl, 600 sims (≈0.94)")
    log_axis(ax, [0.4, 0.6, 1, 2, 3, 5])
axes[0][0].set_ylabel("raw policy: mean mistakes %\n(End-Easy, Middle-Easy, Middle-Medium, Begin-Easy)")
axes[1][0].set_ylabel("search 600: mean mistakes %\n(all five sets)")
axes[1][0].set_xlabel("self-play simulations (millions)")
axes[1][1].set_xlabel("wall hours, 2 cores (often shared with a second run)")
axes[0][0].legend(fontsize=7)
axes[1][0].legend(fontsize=7)
fig.suptitle("The connect4 champion's lineage on Pons' test positions")
fig.tight_layout()
fig.savefig(sys.argv[1], dpi=100)
