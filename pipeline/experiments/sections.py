"""What the report is made of: sections of text, tables and plots, drawn by the experiments and the
training summary alike (matplotlib drawing off-screen, so a stage needs no display)."""

from __future__ import annotations

from dataclasses import dataclass, field

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

__all__ = ["Plot", "Section", "log_levels", "plt"]


@dataclass
class Plot:
    name: str  # file stem
    caption: str
    figure: object


@dataclass
class Section:
    title: str
    text: str = ""
    plots: list[Plot] = field(default_factory=list)
    tables: list[list[dict]] = field(default_factory=list)


def log_levels(ax, levels: list[int]) -> None:
    """Budgets on a log axis, labelled with the budgets themselves."""
    ax.set_xscale("log")
    ax.set_xticks(levels, [str(level) for level in levels])
    ax.minorticks_off()
