"""Strength against compute for Kingdomino runs: each measured generation's score against a fixed
opponent (greedy) beside the self-play simulations and wall hours its run had spent to reach it, taught
and untaught runs on one plot (issue 36's curve). The hours are the run's own (`metrics/`: the teacher's
games and fit, then self-play, training and gating), read as the report stage reads them.

The scores are `python -m pipeline match RUN/models/best/gen_G.ckpt greedy --first-alone
--games-per-seating 10 --simulations 50 --seed S --params RUN/params.yaml | tail -1` lines saved as
PREFIX-genG-seedS.json; the seeds of a generation are pooled, with a normal 95% interval over the
pooled games.

Usage: python benchmarks/kingdomino_curve.py LABEL=RUN:PREFIX [LABEL=RUN:PREFIX ...] [--plot PNG]
(e.g. taught=runs/kd2-teach:runs/kd-diag/kd2-teach)"""

import argparse
import glob
import json
import math
import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from pipeline.atomic import atomic_path  # noqa: E402
from pipeline.evaluation.lineage import run_compute  # noqa: E402


def pooled_scores(prefix: str) -> dict[int, tuple[float, int]]:
    """Generation -> (pooled score, games) over every PREFIX-genG-seedS.json found."""
    pooled: dict[int, list[tuple[float, int]]] = {}
    for path in glob.glob(f"{prefix}-gen*-seed*.json"):
        match = re.fullmatch(re.escape(prefix) + r"-gen(\d+)-seed\d+\.json", path)
        try:
            line = json.loads(Path(path).read_text()) if match else None
        except ValueError:  # a measurement cut off before its last line
            print(f"{path}: not a match's JSON line; left out", file=sys.stderr)
            continue
        if line:
            pooled.setdefault(int(match[1]), []).append((line["score"], line["games"]))
    return {
        generation: (sum(s * n for s, n in parts) / sum(n for _, n in parts), sum(n for _, n in parts))
        for generation, parts in pooled.items()
    }


def curve(run: Path, prefix: str) -> list[dict]:
    """The measured generations of `run` with the compute behind each, generation order."""
    compute = run_compute(run)
    rows = []
    for generation, (score, games) in sorted(pooled_scores(prefix).items()):
        if generation < len(compute):
            half = 1.96 * math.sqrt(score * (1 - score) / games)
            rows.append(
                {**compute[generation], "score": score, "low": score - half, "high": score + half, "games": games}
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("curves", nargs="+", metavar="LABEL=RUN:PREFIX")
    parser.add_argument("--plot", help="write the plot here")
    args = parser.parse_args()
    figure, axis = plt.subplots(figsize=(7, 4))
    for spec in args.curves:
        label, _, rest = spec.partition("=")
        run, _, prefix = rest.partition(":")
        rows = curve(Path(run), prefix)
        print(f"## {label} ({run})\n\n| generation | hours | self-play simulations | score (95% CI) | games |")
        print("|---|---|---|---|---|")
        for r in rows:
            print(
                f"| {r['generation']} | {r['hours']:.2f} | {r['simulations'] / 1e6:.2f}M | "
                f"{r['score']:.3f} ({r['low']:.3f}–{r['high']:.3f}) | {r['games']} |"
            )
        print()
        hours = [r["hours"] for r in rows]
        scores = [r["score"] for r in rows]
        errors = [[r["score"] - r["low"] for r in rows], [r["high"] - r["score"] for r in rows]]
        axis.errorbar(hours, scores, yerr=errors, marker="o", capsize=3, label=label)
    axis.axhline(0.5, color="grey", linewidth=0.8, linestyle="--")
    axis.set_xlabel("wall hours of the run (teacher, self-play, training, gating)")
    axis.set_ylabel("score against greedy (95% CI)")
    axis.legend()
    figure.tight_layout()
    if args.plot:
        with atomic_path(args.plot) as temporary:  # a cut-off run leaves no half-written picture
            figure.savefig(temporary, format="png", dpi=100)


if __name__ == "__main__":
    main()
