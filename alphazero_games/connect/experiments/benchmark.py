"""Connect-4 only (`evaluate.benchmark`): mistakes on Pons' test positions by the raw policy and by
search, for the champion and (`every_generation`) every generation's best network, whose curve
against the compute spent to reach it the report draws."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path

from alphazero_games.connect.experiments.pons import mistake_rates, positions_dir, resolve_files
from alphazero_games.connect.params import BenchmarkParams
from pipeline.agents.recipes import search_config
from pipeline.evaluation.strength_curve import cached_score, cumulative_compute, curve
from pipeline.experiments.base import Experiment, Plan, ReportContext, Setting
from pipeline.experiments.sections import Plot, Section, plt
from pipeline.nets.checkpoint import weights_digest
from pipeline.nets.network_evaluator import NetworkEvaluator
from pipeline.nets.senet import SENet
from pipeline.plumbing.progress import progress_bar
from pipeline.search import CachingEvaluator

# AlphaZero.jl's Connect-4 agent (600 simulations) on Pons' sets, from ../positions/connect4/README.md
PUBLISHED_MISTAKES = {
    "Test_L3_R1": 0.0,
    "Test_L2_R1": 0.0,
    "Test_L2_R2": 2.7,
    "Test_L1_R1": 0.0,
    "Test_L1_R2": 2.0,
    "Test_L1_R3": 7.0,
}
# The depth-5 minimax baseline on the same sets, same source.
PUBLISHED_MINIMAX5 = {
    "Test_L3_R1": 1.4,
    "Test_L2_R1": 0.7,
    "Test_L2_R2": 9.2,
    "Test_L1_R1": 1.7,
    "Test_L1_R2": 7.3,
    "Test_L1_R3": 23.5,
}


@dataclass
class BenchmarkResult:
    simulations: int  # self-play's search budget, for the compute each generation cost
    champion: list[dict]  # per set and chooser: set, chooser, positions, percent, ...
    generations: list[dict] | None = None  # the same rows for every generation, with `generation`

    def to_json(self) -> dict:
        data: dict = {"benchmark": self.champion}
        if self.generations is not None:
            data["benchmark_generations"] = self.generations
        return data

    @classmethod
    def read(cls, data: dict) -> BenchmarkResult | None:
        if not (data.get("benchmark") or data.get("benchmark_generations")):
            return None
        return cls(data["simulations"], data.get("benchmark", []), data.get("benchmark_generations"))

    def tracked(self):
        return [
            (f"mistakes_{row['set']}_{row['chooser'].replace(' ', '')}", row["percent"], row["generation"])
            for row in self.generations or []
        ]

    def headline(self) -> dict[str, float]:
        return {}

    def sections(self, context: ReportContext) -> list[Section]:
        sections = [benchmark_section(self.champion)] if self.champion else []
        if self.generations:
            compute = cumulative_compute(context.selfplay, context.train, context.gate, self.simulations, context.start)
            sections.append(curve_section(curve(self.generations, compute)))
        return sections


def plan(setting: Setting) -> Plan | str:
    game, params = setting.game, setting.params
    data_dir = positions_dir(params.evaluate.benchmark.data_dir)
    files = resolve_files(data_dir, params.evaluate.benchmark.files)
    if not files:
        return f"Connect-4 benchmark: no test files in {data_dir} (evaluate.benchmark.data_dir)."

    def summarise() -> BenchmarkResult:
        scored = Path(setting.cache_dir) / "benchmark"
        results = run_benchmark(
            game, setting.networks, files, params.evaluate.benchmark, search_config(params), scored, setting.progress
        )
        return BenchmarkResult(params.search.simulations, results["benchmark"], results.get("benchmark_generations"))

    return Plan([], summarise)


def run_benchmark(
    game, networks: list[SENet], files: list[Path], b: BenchmarkParams, config, cache_dir: Path, progress=True
) -> dict:
    """Mistakes on Pons' sets: the champion's rows and, with `every_generation`, every generation's
    (the strength-against-compute curve), each network scored once and kept in `cache_dir`."""
    settings = {"files": [f.name for f in files], "positions": b.positions_per_set, "sims": b.simulations}
    settings["search"] = repr(config)

    def rows(network: SENet) -> list[dict]:
        evaluator = CachingEvaluator(NetworkEvaluator(game, network, config.precision, config.runtime, config.device))
        score = partial(mistake_rates, game, evaluator, files, b.positions_per_set, b.simulations, config)
        return cached_score(weights_digest(network.state_dict()), score, settings, cache_dir)

    scored = list(enumerate(networks)) if b.every_generation else [(len(networks) - 1, networks[-1])]
    bar = progress_bar(desc="Connect-4 benchmark, generation", disable=not progress, leave=False, iterable=scored)
    generations = [{"generation": g, **row} for g, network in bar for row in rows(network)]
    g = len(networks) - 1
    champion = [{k: v for k, v in r.items() if k != "generation"} for r in generations if r["generation"] == g]
    results: dict = {"benchmark": champion}
    if b.every_generation:
        results["benchmark_generations"] = generations
    return results


def benchmark_section(rows: list[dict]) -> Section:
    """The champion's mistakes per set beside the published AlphaZero.jl figures."""
    files = list(dict.fromkeys(r["set"] for r in rows))
    choosers = list(dict.fromkeys(r["chooser"] for r in rows))
    fig, ax = plt.subplots(figsize=(7, 3.5))
    width = 0.8 / (len(choosers) + 1)
    for k, chooser in enumerate(choosers):
        values = {r["set"]: r["percent"] for r in rows if r["chooser"] == chooser}
        ax.bar([i + k * width for i in range(len(files))], [values.get(f, 0) for f in files], width, label=chooser)
    published = [PUBLISHED_MISTAKES.get(f) for f in files]
    ax.bar([i + len(choosers) * width for i in range(len(files))], [p or 0 for p in published], width,
           color="black", alpha=0.3, label="AlphaZero.jl, 600 sims (published)")  # fmt: skip
    ax.set_xticks([i + width * len(choosers) / 2 for i in range(len(files))], files, rotation=20, fontsize=7)
    ax.set(ylabel="mistakes (%)", title="Connect-4 test positions")
    ax.legend(fontsize=7)
    positions = rows[0]["positions"]
    caption = (
        f"Share of moves whose win/draw/loss outcome is worse than the best available, {positions} positions per "
        "set, for the raw policy and for search; grey: the published AlphaZero.jl figures."
    )
    table = [{k: round(v, 2) if isinstance(v, float) else v for k, v in r.items()} for r in rows]
    return Section("Connect-4 benchmark", "", [Plot("benchmark", caption, fig)], [table])


def curve_section(rows: list[dict]) -> Section:
    """Mistakes per generation against the self-play simulations and wall hours spent (`curve` rows),
    averaged over the sets, beside the published AlphaZero.jl and depth-5 minimax averages."""
    sets = list(dict.fromkeys(r["set"] for r in rows))
    choosers = list(dict.fromkeys(r["chooser"] for r in rows))
    generations = sorted({r["generation"] for r in rows})
    mean = {
        (g, c): sum(r["percent"] for r in rows if r["generation"] == g and r["chooser"] == c) / len(sets)
        for g in generations
        for c in choosers
    }
    spent = {r["generation"]: r for r in rows}
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
    for ax, key, label in zip(axes, ("simulations", "hours"), ("self-play simulations", "wall hours")):
        for chooser in choosers:
            ax.plot([spent[g][key] for g in generations], [mean[g, chooser] for g in generations], "o-", label=chooser)
        for published, style, name in ((PUBLISHED_MISTAKES, "--", "AlphaZero.jl, 600 sims"),
                                       (PUBLISHED_MINIMAX5, ":", "minimax depth 5")):  # fmt: skip
            if all(s in published for s in sets):
                ax.axhline(sum(published[s] for s in sets) / len(sets), color="k", linestyle=style, label=name)
        ax.set(xlabel=label)
    axes[0].set(ylabel="mistakes (%), mean over sets", title="Connect-4 mistakes against compute")
    axes[0].legend(fontsize=7)
    caption = (
        f"Mean share of mistakes over {len(sets)} of Pons' sets ({rows[0]['positions']} positions each) for the best "
        "network of each generation, against the self-play simulations and the wall hours (self-play, training, "
        "gating) spent to reach it; dashed and dotted: the published AlphaZero.jl and depth-5 minimax averages."
    )
    table = [
        {
            "generation": g,
            "simulations": spent[g]["simulations"],
            "hours": round(spent[g]["hours"], 2),
            **{f"{r['set'].removeprefix('Test_')} {r['chooser']}": round(r["percent"], 1)
               for r in rows if r["generation"] == g},
        }
        for g in generations
    ]  # fmt: skip
    return Section("Connect-4 mistakes against compute", "", [Plot("benchmark_curve", caption, fig)], [table])


EXPERIMENT = Experiment("benchmark", plan, BenchmarkResult.read)
