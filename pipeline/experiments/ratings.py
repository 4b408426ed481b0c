"""Bradley-Terry ratings (Elo scale) over every generation's best network and baselines (`evaluate.ratings`:
UCT budgets, and any baseline of the player grammar, such as Kingdomino's greedy and mce:50), and the Connect-4
bot post's win / draw / loss curves against the first network."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from pipeline.agents.names import BASELINES, baseline_spec, parse_player, refuse_not_brought
from pipeline.agents.recipes import head_to_head_player
from pipeline.agents.spec import AgentSpec
from pipeline.config import ConfigError
from pipeline.experiments.base import Experiment, Plan, PlannedMatch, ReportContext, Setting
from pipeline.experiments.sections import Plot, Section, plt
from pipeline.matches.arena import mixed_seatings, pairwise_outcomes
from pipeline.matches.bradley_terry import fit_bradley_terry, pairwise_results
from pipeline.nets.checkpoint import weights_digest

NO_CHANGE = {"win": 0.0, "draw": 1.0, "loss": 0.0}


@dataclass
class RatingsResult:
    table: list[dict]  # per player: name, rating, ci_low, ci_high, games
    player_of: dict[int, str]  # the player holding each generation's best network
    versus_first: list[dict]  # per generation after the first: generation, player, win, draw, loss

    def to_json(self) -> dict:
        return {"ratings": self.table, "player_of_generation": self.player_of, "versus_first": self.versus_first}

    @classmethod
    def read(cls, data: dict) -> RatingsResult | None:
        if not data.get("ratings"):
            return None
        player_of = {int(g): name for g, name in data["player_of_generation"].items()}
        return cls(data["ratings"], player_of, data["versus_first"])

    def rating_of_generation(self) -> dict[int, float]:
        ratings = {row["name"]: row["rating"] for row in self.table}
        return {generation: ratings[player] for generation, player in self.player_of.items()}

    def tracked(self):
        return [("elo", rating, generation) for generation, rating in self.rating_of_generation().items()]

    def headline(self) -> dict[str, float]:
        ratings = self.rating_of_generation()
        return {"elo": round(ratings[max(ratings)], 1)}

    def sections(self, context: ReportContext) -> list[Section]:
        """Ratings per generation with intervals, baselines as lines; the Connect-4 bot post's W/D/L curves."""
        by_name = {row["name"]: row for row in self.table}
        gens = sorted(self.player_of)
        rating = [by_name[self.player_of[g]]["rating"] for g in gens]
        low = [by_name[self.player_of[g]]["rating"] - by_name[self.player_of[g]]["ci_low"] for g in gens]
        high = [by_name[self.player_of[g]]["ci_high"] - by_name[self.player_of[g]]["rating"] for g in gens]
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.errorbar(gens, rating, yerr=[low, high], fmt="o-", capsize=3, label="best network of the generation")
        for name, row in by_name.items():
            if not name.startswith("gen"):
                ax.axhline(row["rating"], linestyle=":", color="tab:gray")
                ax.annotate(name, (gens[0], row["rating"]), textcoords="offset points", xytext=(2, 3), fontsize=7)
        ax.set(xlabel="generation", ylabel="Elo (generation 0 = 0)", title="rating over generations")
        ax.set_xticks(gens)
        ax.legend(fontsize=7)
        games = sum(row["games"] for row in self.table) // 2
        plots = [
            Plot(
                "ratings",
                f"Bradley-Terry ratings on the Elo scale with 95% intervals, fitted from {games} pairwise results "
                "between the generations' best networks and the baselines (dotted).",
                fig,
            )
        ]
        rows = self.versus_first
        fig, ax = plt.subplots(figsize=(6, 3.5))
        x = [r["generation"] for r in rows]
        for kind, color in (("win", "tab:green"), ("draw", "tab:gray"), ("loss", "tab:red")):
            ax.plot(x, [r[kind] for r in rows], "o-", color=color, label=kind)
        ax.set(xlabel="generation", ylabel="share of seat pairs", ylim=(0, 1), title="against the first network")
        ax.set_xticks(x)
        ax.legend(fontsize=7)
        caption = "The Connect-4 bot post: win / draw / loss rate of each generation's best network against the"
        plots.append(Plot("versus_first", caption + " untrained first network.", fig))
        rounded = [  # the player's name first: the table comes back from JSON with its keys sorted
            {
                "name": row["name"],
                **{k: round(v, 1) if isinstance(v, float) else v for k, v in row.items() if k != "name"},
            }
            for row in sorted(self.table, key=lambda r: -r["rating"])
        ]
        return [Section("Ratings", "", plots, [rounded])]


def plan(setting: Setting) -> Plan | str:
    """Each distinct best network plays the first one, the `previous` distinct ones before it and the
    baselines, so a new generation adds a fixed number of matches. A generation that promoted
    nothing keeps its predecessor's network: the same player, named after the generation that made it."""
    game, params = setting.game, setting.params
    ratings, ev = params.evaluate.ratings, params.evaluate
    players: list[AgentSpec] = []
    digests: list[str] = []
    player_of: dict[int, str] = {}
    for generation, network in enumerate(setting.networks):
        digest = weights_digest(network.state_dict())
        if digest not in digests:
            digests.append(digest)
            # Network players vary their openings as in gating, else two fixed networks replay one game.
            players.append(head_to_head_player(f"gen{generation}", network, params))
        player_of[generation] = players[digests.index(digest)].name
    baselines = [AgentSpec.uct(f"uct{b}", b, ev.c_uct, params.seed + b) for b in ratings.uct_baselines]
    baselines += named_baselines(game, params)
    seatings = mixed_seatings(game.num_players) * ratings.games_per_seating
    matches = [PlannedMatch("ratings", "gen0", [players[0], b], seatings) for b in baselines]
    for i, player in enumerate(players[1:], start=1):
        rivals = [players[j] for j in dict.fromkeys([0, *range(max(0, i - ratings.previous), i)])]
        matches += [PlannedMatch("ratings", rival.name, [player, rival], seatings) for rival in rivals + baselines]
    if not matches:
        return "Ratings: a single network and no baseline, nothing to compare."
    return Plan(matches, lambda: summarise(matches, player_of))


def named_baselines(game, params) -> list[AgentSpec]:
    """`evaluate.ratings.baselines` as players, each named as written less its colon (`mce50`); one
    ConfigError naming the entry for a name the grammar does not know or the game cannot seat."""
    specs = []
    for i, text in enumerate(params.evaluate.ratings.baselines):
        try:
            player = parse_player(text, BASELINES)
            refuse_not_brought(player, game)
            spec = baseline_spec(player, text.replace(":", ""), params.evaluate.c_uct, params.seed + i)
            spec.build(game)
        except ValueError as err:
            raise ConfigError(f"evaluate.ratings.baselines[{i}]: {err}") from None
        specs.append(spec)
    return specs


def summarise(matches: list[PlannedMatch], player_of: dict[int, str]) -> RatingsResult:
    """Elo-scale ratings anchored at the first network, and each generation's win / draw / loss
    against it (the Connect-4 bot post; a generation still holding the first network draws by definition)."""
    fitted = fit_bradley_terry(pairwise_results([r for m in matches for r in m.records]), anchor="gen0")
    table = [{"name": name, **asdict(rating)} for name, rating in fitted.items()]
    against_first = {m.agents[0].name: m.records for m in matches if m.label == "gen0" and m.agents[1].name == "gen0"}
    versus_first = []
    for generation, player in player_of.items():
        if generation == 0:
            continue
        outcomes = pairwise_outcomes(against_first[player], player, "gen0") if player != "gen0" else None
        versus_first.append({"generation": generation, "player": player, **(outcomes or NO_CHANGE)})
    return RatingsResult(table, player_of, versus_first)


EXPERIMENT = Experiment("ratings", plan, RatingsResult.read)
