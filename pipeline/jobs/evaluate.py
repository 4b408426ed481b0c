"""The `evaluate` stage's experiments, each switched on and budgeted in `params.yaml` (`evaluate:`).

Every experiment plans its matches (agents, seatings); all matches not found in the match cache are
played on one pool of workers and each is saved the moment it completes, so an interrupted
evaluation resumes without replaying finished matches and a new generation plays only new matches.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path

import numpy as np
from tqdm import tqdm

from pipeline.agents.pig_policy import hold_at_rolls, network_rolls, optimal_rolls
from pipeline.agents.recipes import champion_player, head_to_head_player, search_config
from pipeline.agents.spec import AgentSpec
from pipeline.config import BenchmarkParams, Params
from pipeline.games.pig import PigGame
from pipeline.jobs.connect4_benchmark import mistake_rates, positions_dir, resolve_files
from pipeline.jobs.strength_curve import cached_score
from pipeline.matches.arena import (
    GameRecord,
    mean_score,
    mixed_seatings,
    pairwise_outcomes,
    pairwise_score,
    score_interval,
    seat_permutations,
)
from pipeline.matches.cache import MatchCache
from pipeline.matches.ratings import fit_bradley_terry, pairwise_results
from pipeline.matches.workers import Workers, play_matches
from pipeline.nets.checkpoint import weights_digest
from pipeline.nets.evaluator import NetworkEvaluator
from pipeline.nets.senet import SENet
from pipeline.search import CachingEvaluator
from pipeline.solvers.pig import match_win_probability


@dataclass
class PlannedMatch:
    experiment: str
    label: object  # what the experiment reads back: an opponent level, a (depth, sims) cell, ...
    agents: list[AgentSpec]
    seatings: list[list[int]]  # indices into `agents`
    records: list[GameRecord] = field(default_factory=list)
    starts: list | None = None  # opening states, one per game (default: the initial position)


def spec_identity(spec: AgentSpec) -> str:
    """What makes a player play the way it does: its recipe and, for networks, the weights' content."""
    parts = [spec.name, spec.kind, repr(spec.play), repr(spec.search), str(spec.seed), str(spec.epsilon)]
    parts += [str(spec.hold_at), str(spec.depth)]
    if spec.network is not None:
        parts.append(weights_digest(spec.network[1]))
    return "|".join(parts)


# --- seed 000: fig. 3a / 3b ----------------------------------------------------------------------
def plan_fig3(game, champion: SENet, params: Params) -> list[PlannedMatch]:
    ev = params.evaluate
    subjects = [
        champion_player("alphazero", champion, params),
        AgentSpec.uct("control", params.search.rollouts, ev.c_uct, params.seed + 1),
    ]
    matches = []
    for level in ev.fig3.opponent_rollouts:
        opponent = AgentSpec.uct(f"uct{level}", level, ev.c_uct, params.seed + level)
        for experiment, subject in (("fig3a", subjects[0]), ("fig3b_control", subjects[1])):
            table = seat_permutations([0] + [1] * (game.num_players - 1))
            seatings = table * ev.fig3.games_per_seating
            matches.append(PlannedMatch(experiment, level, [subject, opponent], seatings))
    return matches


def summarise_fig3(matches: list[PlannedMatch]) -> dict:
    results: dict = {}
    for match in matches:
        subject, opponent = match.agents[0].name, match.agents[1].name
        mine, theirs = mean_score(match.records, subject), mean_score(match.records, opponent)
        row = {"opponent_rollouts": match.label, "score": mine, "opponent_score": theirs}
        results.setdefault(match.experiment, []).append(
            {**row, "difference": mine - theirs, "games": len(match.records)}
        )
    az = np.array([r["difference"] for r in results["fig3a"]])
    ctl = np.array([r["difference"] for r in results["fig3b_control"]])
    results["alphazero_minus_control"] = (az - ctl).tolist()
    results["alphazero_at_least_control_everywhere"] = bool((az >= ctl).all())
    return results


# --- two-player Pig: oracles ---------------------------------------------------------------------
def has_pig_oracle(game) -> bool:
    return isinstance(game, PigGame) and game.num_players == 2


def plan_pig_oracle(game, champion: SENet, params: Params) -> list[PlannedMatch]:
    oracle = params.evaluate.pig_oracle
    subject = champion_player("alphazero", champion, params)
    opponents = [
        AgentSpec("optimal", "pig_optimal"),
        AgentSpec(f"hold_at_{oracle.hold_at}", "pig_hold", hold_at=oracle.hold_at),
    ]
    seatings = [[0, 1], [1, 0]] * oracle.games_per_seat
    return [PlannedMatch("pig_oracle", o.name, [subject, o], seatings) for o in opponents]


def exact_pig_oracle(game: PigGame, champion: SENet, params: Params) -> list[dict]:
    """The champion's policy head alone (no search) against the same oracles, scored exactly: a figure
    without sampling error, which separates what the network learnt from what search adds."""
    hold_at = params.evaluate.pig_oracle.hold_at
    opponents = {"optimal": optimal_rolls(game.goal), f"hold_at_{hold_at}": hold_at_rolls(game.goal, hold_at)}
    first_seat, second_seat = (network_rolls(game, champion, seat) for seat in (0, 1))
    rows = []
    for name, rolls in opponents.items():
        first = match_win_probability(first_seat, rolls)[0]
        second = match_win_probability(second_seat, rolls)[1]
        rows.append({"opponent": name, "moving_first": first, "moving_second": second, "score": (first + second) / 2})
    return rows


def summarise_pig_oracle(matches: list[PlannedMatch], exact: list[dict]) -> dict:
    rows = [{"opponent": m.label, **score_interval(m.records, m.agents[0].name, m.label)} for m in matches]
    return {"pig_oracle": rows, "pig_oracle_policy_exact": exact}


# --- ratings over generations (and seed 002's curves against the first network) ---------------------
def plan_ratings(game, networks: list[SENet], params: Params) -> tuple[list[PlannedMatch], dict[int, str]]:
    """Each distinct best network plays the first one, the `previous` distinct ones before it and the
    UCT baselines, so a new generation adds a fixed number of matches. A generation that promoted
    nothing keeps its predecessor's network: the same player, named after the generation that made it.
    Returns the matches and the player holding each generation's best network."""
    ratings, ev = params.evaluate.ratings, params.evaluate
    # Network players vary their openings as in gating, else two fixed networks replay one game.
    players: list[AgentSpec] = []
    digests: list[str] = []
    player_of: dict[int, str] = {}
    for generation, network in enumerate(networks):
        digest = weights_digest(network.state_dict())
        if digest not in digests:
            digests.append(digest)
            players.append(head_to_head_player(f"gen{generation}", network, params))
        player_of[generation] = players[digests.index(digest)].name
    baselines = [AgentSpec.uct(f"uct{b}", b, ev.c_uct, params.seed + b) for b in ratings.uct_baselines]
    seatings = mixed_seatings(game.num_players) * ratings.games_per_seating
    matches = [PlannedMatch("ratings", "gen0", [players[0], b], seatings) for b in baselines]
    for i, player in enumerate(players[1:], start=1):
        rivals = [players[j] for j in dict.fromkeys([0, *range(max(0, i - ratings.previous), i)])]
        matches += [PlannedMatch("ratings", rival.name, [player, rival], seatings) for rival in rivals + baselines]
    return matches, player_of


def summarise_ratings(matches: list[PlannedMatch], player_of: dict[int, str]) -> dict:
    """Elo-scale ratings anchored at the first network, and each generation's win / draw / loss
    against it (seed 002; a generation still holding the first network draws by definition)."""
    fitted = fit_bradley_terry(pairwise_results([r for m in matches for r in m.records]), anchor="gen0")
    table = [{"name": name, **asdict(rating)} for name, rating in fitted.items()]
    against_first = {m.agents[0].name: m.records for m in matches if m.label == "gen0" and m.agents[1].name == "gen0"}
    versus_first = []
    for generation, player in player_of.items():
        if generation == 0:
            continue
        outcomes = pairwise_outcomes(against_first[player], player, "gen0") if player != "gen0" else None
        versus_first.append({"generation": generation, "player": player, **(outcomes or NO_CHANGE)})
    return {"ratings": table, "player_of_generation": player_of, "versus_first": versus_first}


NO_CHANGE = {"win": 0.0, "draw": 1.0, "loss": 0.0}


# --- Connect-4 (seed 004): alpha-beta table, games against the perfect solver -------------------
def plan_alphabeta(game, champion: SENet, params: Params) -> list[PlannedMatch]:
    table = params.evaluate.alphabeta
    sides = [[0, 1]] * table.games_per_side + [[1, 0]] * table.games_per_side
    matches = []
    for sims in table.simulations:
        subject = champion_player(f"alphazero@{sims}", champion, params, sims)
        for depth in table.depths:
            opponent = AgentSpec(f"alphabeta{depth}", "alphabeta", depth=depth)
            matches.append(PlannedMatch("alphabeta", (sims, depth), [subject, opponent], sides))
    return matches


def summarise_alphabeta(matches: list[PlannedMatch], params: Params) -> dict:
    table = params.evaluate.alphabeta
    half = table.games_per_side
    grids = {side: [[0.0] * len(table.depths) for _ in table.simulations] for side in ("first", "second", "both")}
    for match in matches:
        sims, depth = match.label
        i, j = table.simulations.index(sims), table.depths.index(depth)
        subject, opponent = match.agents[0].name, match.agents[1].name
        for side, records in (
            ("first", match.records[:half]),
            ("second", match.records[half:]),
            ("both", match.records),
        ):
            grids[side][i][j] = pairwise_score(records, subject, opponent)
    return {"alphabeta": {"simulations": table.simulations, "depths": table.depths, "games_per_side": half, **grids}}


def read_openings(game, path: Path, count: int) -> list[tuple[str, object, int]]:
    """The first `count` positions of a test file as (moves, state, perfect-play sign for the side to move)."""
    openings = []
    for number, line in enumerate(path.read_text().splitlines()[:count], start=1):
        try:
            moves, score = line.split()[:2]
            state = game.initial_state()
            for ch in moves:
                state, _ = game.step(state, game.parse_move(state, ch))
        except ValueError as err:
            raise ValueError(f"{path}: line {number}: expected 'MOVES SCORE' ({err})") from None
        openings.append((moves, state, int(np.sign(int(score)))))
    return openings


def plan_solver_games(game, champion: SENet, params: Params, openings) -> list[PlannedMatch]:
    """Each opening twice: champion to move, then the solver to move (seat 0 moved first at ply 0)."""
    matches = []
    for sims in params.evaluate.solver_games.simulations:
        subject = champion_player(f"alphazero@{sims}", champion, params, sims)
        solver = AgentSpec("solver", "solver")
        for side in ("to_move", "waiting"):
            seatings, starts = [], []
            for _, state, _ in openings:
                champion_seat = state.mover if side == "to_move" else 1 - state.mover
                seatings.append([0, 1] if champion_seat == 0 else [1, 0])
                starts.append(state)
            matches.append(PlannedMatch("solver_games", (sims, side), [subject, solver], seatings, starts=starts))
    return matches


def summarise_solver_games(matches: list[PlannedMatch], openings) -> dict:
    rows = []
    for match in matches:
        sims, side = match.label
        subject = match.agents[0].name
        lost_after = []
        first = 0 if side == "to_move" else 1  # the champion's moves are every other ply from the opening
        for record in match.records:
            if record.scores[record.seating.index(subject)] < 0:
                lost_after.append((len(record.actions) + 1 - first) // 2)
        perfect = [sign if side == "to_move" else -sign for _, _, sign in openings]
        rows.append(
            {
                "simulations": sims,
                "champion": "to move" if side == "to_move" else "waiting",
                "games": len(match.records),
                "score": pairwise_score(match.records, subject, "solver"),
                "perfect_play_score": float(np.mean([(p + 1) / 2 for p in perfect])),
                "losses": len(lost_after),
                "moves_to_loss": float(np.mean(lost_after)) if lost_after else float("nan"),
            }
        )
    return {"solver_games": rows}


# --- running -------------------------------------------------------------------------------------
def play_planned(game, matches: list[PlannedMatch], params: Params, cache: MatchCache, progress: bool) -> float:
    """Fill every match's records from the cache or by playing it; return the seconds spent playing."""
    specs: dict[str, AgentSpec] = {}
    identities: dict[str, str] = {}
    todo = []
    for match in matches:
        for spec in match.agents:
            identity = identities.setdefault(spec.name, spec_identity(spec))
            if identity != spec_identity(spec):
                raise ValueError(f"evaluate: two different agents are both named {spec.name!r}")
            specs.setdefault(spec.name, spec)
        key = cache.key(
            game=game.name,
            agents=[identities[s.name] for s in match.agents],
            seatings=match.seatings,
            starts=[repr(state) for state in match.starts or []],
            seed=params.seed,
            workers=params.workers,  # the chunking decides the games; the backend does not
            parallel=params.evaluate.parallel_games,
        )
        found = cache.get(key)
        if found is not None:
            match.records = [
                GameRecord(r["seating"], scores=np.array(r["scores"]), actions=r["actions"]) for r in found
            ]
        else:
            todo.append((match, key))
    if not todo:
        return 0.0
    names = list(specs)
    seeded = []
    for match, key in todo:
        index = [names.index(s.name) for s in match.agents]
        seatings = [[index[i] for i in seating] for seating in match.seatings]
        seeded.append((seatings, [params.seed, int(key[:8], 16)], match.starts))

    def save(i: int, result) -> None:
        match, key = todo[i]
        match.records = result.records
        cache.put(
            key, [{"seating": r.seating, "scores": r.scores.tolist(), "actions": r.actions} for r in result.records]
        )

    results = play_matches(
        game.name,
        [specs[n] for n in names],
        seeded,
        parallel=params.evaluate.parallel_games,
        workers=Workers.from_params(params),
        progress="evaluate" if progress else None,
        on_match=save,
    )
    return max(r.seconds for r in results)


def run_benchmark(
    game, networks: list[SENet], files: list[Path], b: BenchmarkParams, config, cache_dir: Path, progress=True
) -> dict:
    """Mistakes on Pons' sets: the champion's rows and, with `every_generation`, every generation's
    (the strength-against-compute curve), each network scored once and kept in `cache_dir`."""
    settings = {"files": [f.name for f in files], "positions": b.positions_per_set, "sims": b.simulations}
    settings["search"] = repr(config)

    def rows(network: SENet) -> list[dict]:
        evaluator = CachingEvaluator(NetworkEvaluator(game, network, config.precision))
        score = partial(mistake_rates, game, evaluator, files, b.positions_per_set, b.simulations, config)
        return cached_score(weights_digest(network.state_dict()), score, settings, cache_dir)

    scored = list(enumerate(networks)) if b.every_generation else [(len(networks) - 1, networks[-1])]
    bar = tqdm(scored, desc="Connect-4 benchmark, generation", disable=not progress, leave=False)
    generations = [{"generation": g, **row} for g, network in bar for row in rows(network)]
    g = len(networks) - 1
    champion = [{k: v for k, v in r.items() if k != "generation"} for r in generations if r["generation"] == g]
    results: dict = {"benchmark": champion}
    if b.every_generation:
        results["benchmark_generations"] = generations
    return results


def run_evaluation(game, networks: list[SENet], params: Params, cache_dir: Path, progress=True) -> dict:
    """Every enabled experiment that applies to this game, for the best network of each generation
    (`networks[g]`, the last being the champion); one JSON-able dict of their results. Experiments
    that are on but cannot run here (a Connect-4 table for another game, missing test files) are
    listed under "skipped" with the reason."""
    ev, champion = params.evaluate, networks[-1]
    plans: dict[str, tuple] = {}
    skipped: list[str] = []
    if ev.ratings.enabled:
        matches, player_of = plan_ratings(game, networks, params)
        if matches:
            plans["ratings"] = (matches, partial(summarise_ratings, player_of=player_of))
        else:
            skipped.append("Ratings: a single network and no baseline, nothing to compare.")
    if ev.fig3.enabled:
        plans["fig3"] = (plan_fig3(game, champion, params), summarise_fig3)
    if ev.pig_oracle.enabled and has_pig_oracle(game):
        exact = exact_pig_oracle(game, champion, params)
        plans["pig_oracle"] = (plan_pig_oracle(game, champion, params), partial(summarise_pig_oracle, exact=exact))
    connect4 = game.name == "connect4"
    if ev.alphabeta.enabled and connect4:
        plans["alphabeta"] = (plan_alphabeta(game, champion, params), partial(summarise_alphabeta, params=params))
    data_dir = positions_dir(ev.benchmark.data_dir)
    if ev.solver_games.enabled and connect4:
        opening_file = data_dir / "Test_L1_R2"
        if opening_file.exists():
            openings = read_openings(game, opening_file, ev.solver_games.games_per_side)
            matches = plan_solver_games(game, champion, params, openings)
            plans["solver_games"] = (matches, partial(summarise_solver_games, openings=openings))
        else:
            skipped.append(f"Games against the solver: no opening file {opening_file} (evaluate.benchmark.data_dir).")
    cache = MatchCache(cache_dir)
    seconds = play_planned(game, [m for matches, _ in plans.values() for m in matches], params, cache, progress)
    results: dict = {"rollouts": params.search.rollouts, "seconds": seconds}
    for matches, summarise in plans.values():
        results.update(summarise(matches))
    if ev.benchmark.enabled and connect4:
        files = resolve_files(data_dir, ev.benchmark.files)
        if files:
            config = search_config(params)
            scored = Path(cache_dir) / "benchmark"
            results.update(run_benchmark(game, networks, files, ev.benchmark, config, scored, progress))
        else:
            skipped.append(f"Connect-4 benchmark: no test files in {data_dir} (evaluate.benchmark.data_dir).")
    results["skipped"] = skipped
    return results
