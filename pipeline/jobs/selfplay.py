"""Self-play: the current best network plays itself and every recorded position becomes a training
sample (planes, policy target, value target seen by the mover).

Two strategies: `alphazero` (search with noise and a temperature schedule; targets are the visit
distribution, or with `search.root: gumbel` the Gumbel improved policy, and the game's outcome,
optionally mixed with the search's root value (`root_value_weight`); with playout cap randomization
only full searches are recorded)
and `greedy_td` (Parikh & Wu's "Alpha Zero at Home": greedy value play with epsilon-random moves;
targets are the greedy move and TD(lambda) returns). Either value target may be mixed with the mean
of a few greedy playouts from each position (`playout_value_weight`)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

import numpy as np

from pipeline import seeds
from pipeline.agents.names import seated_baseline
from pipeline.agents.recipes import selfplay_player
from pipeline.agents.spec import AgentSpec
from pipeline.config import ConfigError, Params
from pipeline.games.base import HasMargins, margin_scale, offers, rotate_to_mover, to_absolute
from pipeline.jobs.replay import FIELDS, position_keys
from pipeline.jobs.selfplay_parts import Part, PartStore
from pipeline.matches.arena import GameRecord
from pipeline.matches.workers import MatchResult, Workers, match_workers, play_matches
from pipeline.nets.checkpoint import weights_digest
from pipeline.nets.network_evaluator import NetworkEvaluator
from pipeline.nets.senet import SENet
from pipeline.search import SearchConfig
from pipeline.search.playouts import playout_means


@dataclass
class SelfPlayResult:
    samples: dict[str, np.ndarray]
    games: int
    seconds: float  # wall time, worker start-up included
    playing_seconds: float  # the games alone: the steady-state rate
    simulations: int
    mean_length: float
    served: dict[str, float] = field(default_factory=dict)  # the inference server's figures, where one served

    @classmethod
    def from_parts(cls, parts: list[Part]) -> SelfPlayResult:
        games = sum(p.games for p in parts)
        return cls(
            samples={name: np.concatenate([p.samples[name] for p in parts]) for name in FIELDS},
            games=games,
            seconds=sum(p.seconds for p in parts),
            playing_seconds=sum(p.playing_seconds for p in parts),
            simulations=sum(p.simulations for p in parts),
            mean_length=sum(p.moves for p in parts) / games,
        )

    @cached_property  # the stage writes and logs them: count the distinct positions once
    def metrics(self) -> dict[str, float]:
        return {
            "games": self.games,
            "samples": len(self.samples["values"]),
            "games_per_s": self.games / self.seconds,
            "simulations": self.simulations,
            "simulations_per_s": self.simulations / self.playing_seconds,
            "mean_game_length": self.mean_length,
            "distinct_positions": distinct_share(self.samples["states"]),
            "seconds": self.seconds,
            **self.served,
        }


def distinct_share(states: np.ndarray) -> float:
    """Distinct positions over recorded positions: low when self-play replays the same lines (the most
    visited move after a few sampled plies), which leaves the network few positions to learn from
    (docs/results/connect4-strength.md, "Self-play diversity")."""
    if len(states) == 0:
        return 0.0
    return len(np.unique(position_keys(states))) / len(states)


def td_lambda_returns(next_values: np.ndarray, outcome: np.ndarray, gamma: float, lam: float) -> np.ndarray:
    """lambda-returns of one game's positions s_0..s_{T-1}, absolute seats.

    `next_values[t]` is the network's value of s_{t+1} for t < T-1; the last move reaches the end,
    whose value is the outcome. G_{T-1} = gamma * z and G_t = gamma * ((1 - lam) V(s_{t+1}) + lam G_{t+1}).
    """
    returns = np.zeros((len(next_values) + 1, len(outcome)))
    returns[-1] = gamma * outcome
    for t in range(len(next_values) - 1, -1, -1):
        returns[t] = gamma * ((1 - lam) * next_values[t] + lam * returns[t + 1])
    return returns


def end_values(game, records: list[GameRecord], params: Params) -> list[np.ndarray]:
    """Each game's outcome under the params' value scheme (absolute seats); it reads `value` alone, so
    that a teacher's games (`teacher.py`) do not make the init stage depend on `search`."""
    end_value = SearchConfig(value=params.value).end_value(game)
    return [end_value(r.final_state) for r in records]


def greedy_td_targets(
    game, value_net: NetworkEvaluator, records: list[GameRecord], outcomes: list[np.ndarray], params: Params
) -> list[np.ndarray]:
    """Per game, the TD(lambda) value target of each recorded position (absolute seats)."""
    later = [s for r in records for s in r.states[1:]]  # s_1..s_{T-1} of every game, in one batch
    values = np.zeros((0, game.num_players))
    if later:
        _, relative = value_net.evaluate(later)
        values = to_absolute(relative, np.array([game.to_play(s) for s in later]))
    gamma, lam = params.selfplay.td_gamma, params.selfplay.td_lambda
    targets, start = [], 0
    for record, outcome in zip(records, outcomes):
        count = len(record.states) - 1
        targets.append(td_lambda_returns(values[start : start + count], outcome, gamma, lam))
        start += count
    return targets


def alphazero_targets(
    records: list[GameRecord], outcomes: list[np.ndarray], root_value_weight: float
) -> list[np.ndarray]:
    """Per game, the value target of each recorded position (absolute seats): (1 - w) z + w q, with z
    the outcome and q the search's root value at that position ("(z + q) / 2" at w = 0.5)."""
    w = root_value_weight
    if w == 0:  # the outcome alone: needs no root values
        return [np.tile(z, (len(r.states), 1)) for r, z in zip(records, outcomes)]
    return [(1 - w) * z + w * np.reshape(r.root_values, (-1, len(z))) for r, z in zip(records, outcomes)]


def compact_planes(planes: np.ndarray) -> np.ndarray:
    """The planes as bytes where that loses nothing (0/1 and small counts: a quarter of the memory a
    replay window takes), else as they are: a fraction (an OpenSpiel observation) must not be cut."""
    compact = planes.astype(np.uint8)
    return compact if np.array_equal(compact, planes) else planes.astype(np.float32)


def records_to_samples(
    game, records: list[GameRecord], generation: int, value_targets: list[np.ndarray]
) -> dict[str, np.ndarray]:
    """Samples from recorded positions, with one value target (absolute seats) per position, and the
    game's final points as the score head's target (`final_points`)."""
    states = [s for r in records for s in r.states]
    values = [rotate_to_mover(v, m) for r, vs in zip(records, value_targets) for v, m in zip(vs, r.policy_movers)]
    points = [final_points(game, r.final_state) for r in records]
    scores = [rotate_to_mover(p, m) for r, p in zip(records, points) for m in r.policy_movers]
    return {
        "states": compact_planes(game.encode_batch(states)),
        "policies": np.stack([p for r in records for p in r.policies]).astype(np.float32),
        "values": np.stack(values).astype(np.float32),
        "generations": np.full(len(states), generation, dtype=np.int32),
        "scores": np.stack(scores).astype(np.float32),
    }


def final_points(game, final_state) -> np.ndarray:
    """Each seat's final points (absolute seats) above the table's mean, in the game's clear-win gaps
    (`margin_scale`: 20 points in Kingdomino), the score head's target; zeros for a game without
    margins, whose networks have no score head (`train.score_weight` is refused there)."""
    if not offers(game, HasMargins):
        return np.zeros(game.num_players)
    points = np.asarray(game.margins(final_state), dtype=np.float64)
    return (points - points.mean()) / margin_scale(game)


def random_openings(game, games: int, max_plies: int, seed: list[int]) -> list | None:
    """Each game's first position: 0..`max_plies` (uniformly drawn) uniformly random moves from the
    initial state, stopping before a move that would end the game; None when `max_plies` is 0.

    Why: a good network's self-play visits few kinds of positions, while Pons' test sets and human
    opponents reach positions no careful player would; the searched moves after a random opening are
    trained, the random moves are not (docs/results/connect4-strength.md, "Random openings"). Game i draws from its own
    seed, so the openings do not depend on the worker count."""
    if max_plies == 0:
        return None
    starts = []
    for i in range(games):
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(i,)))
        state = game.initial_state(rng)
        starts.append(random_moves(game, state, rng.integers(max_plies + 1), rng))
    return starts


def random_moves(game, state, plies: int, rng: np.random.Generator):
    """`state` after up to `plies` uniformly random moves, stopping before a move that would end the game."""
    for _ in range(plies):
        following, _ = game.step(state, int(rng.choice(game.legal_actions(state))), rng)
        if game.is_terminal(following):
            break
        state = following
    return state


OPPONENT = "opponent"  # the name `selfplay.opponent` plays under in the records; its positions are not samples


def opponent_spec(game, params: Params) -> AgentSpec | None:
    """`selfplay.opponent` as a player, None where self-play has none; one ConfigError naming the field
    for a name the grammar does not know, a game that cannot seat it, or too many seats."""
    sp = params.selfplay
    if sp.opponent is None or sp.opponent_share == 0:
        return None
    if sp.opponent_seats >= game.num_players:
        raise ConfigError(
            f"selfplay.opponent_seats: {sp.opponent_seats}, where {game.name} has {game.num_players} seats; "
            "expected fewer: the network keeps one"
        )
    try:
        return seated_baseline(game, sp.opponent, OPPONENT, params.evaluate.c_uct, params.seed)[1]
    except ValueError as err:
        raise ConfigError(f"selfplay.opponent: {err}") from None


def opponent_seatings(game, params: Params, generation: int) -> list[list[int]]:
    """Each game's seating, 0 the network and 1 the opponent: a share `opponent_share` of the games seat
    the opponent in `opponent_seats` seats drawn for that game, the same whatever the workers."""
    sp = params.selfplay
    rng = np.random.default_rng(seeds.selfplay_opponents(params.seed, generation))
    mixed, seats = rng.random(sp.games) < sp.opponent_share, rng.random((sp.games, game.num_players)).argsort(axis=1)
    return [
        [int(seat in seats[i, : sp.opponent_seats]) if mixed[i] else 0 for seat in range(game.num_players)]
        for i in range(sp.games)
    ]


def own_positions(record: GameRecord) -> GameRecord:
    """The record's positions where the network moved: an opponent's moves are neither policy targets
    nor value samples (its seats' outcomes are the network's opponents', as any game's)."""
    keep = [i for i, mover in enumerate(record.policy_movers) if record.seating[mover] != OPPONENT]
    if len(keep) == len(record.policy_movers):
        return record
    return replace(
        record,
        states=[record.states[i] for i in keep],
        policies=[record.policies[i] for i in keep],
        policy_movers=[record.policy_movers[i] for i in keep],
        root_values=[record.root_values[i] for i in keep],
    )


def run_selfplay(
    game, model: SENet, params: Params, generation: int, progress: bool = True, parts: Path | None = None
) -> SelfPlayResult:
    """Play the generation's games in parts of `parallel_games` per worker, each part with its own
    seed. With a `parts` folder every finished part is saved there and a part found there is not played
    again, so a stopped stage resumes (`selfplay_parts.py`)."""
    sp = params.selfplay
    workers = Workers.from_params(params)
    count = match_workers(workers, sp.games)
    size = sp.parallel_games * count
    numbers = range(-(-sp.games // size))
    opponent = opponent_spec(game, params)
    table = opponent_seatings(game, params, generation) if opponent else [[0] * game.num_players] * sp.games
    seatings = [table[n * size : (n + 1) * size] for n in numbers]
    store = None
    if parts is not None:
        read = params.model_dump(mode="json", include={"game", "seed", "workers", "value", "search", "selfplay"})
        identity = {"params": read, "weights": weights_digest(model.state_dict()), "generation": generation}
        if opponent:  # a UCT opponent plays by evaluate.c_uct too
            identity["opponent_c_uct"] = params.evaluate.c_uct
        store = PartStore(parts, {**identity, "workers": count})
    done = {n: store.get(n, len(seatings[n])) for n in numbers} if store else {}
    todo = [n for n in numbers if done.get(n) is None]
    starts = random_openings(game, sp.games, sp.random_opening_plies, seeds.random_openings(params.seed, generation))
    greedy = sp.strategy == "greedy_td" and bool(todo)  # its value targets need the network; saved parts do not
    search = params.search
    value_net = NetworkEvaluator(game, model, search.precision, search.runtime, params.device) if greedy else None
    clock = {"finished": time.time(), "played": -math.inf}  # when the last part was saved; the latest game end

    def finish(i: int, result: MatchResult) -> None:
        now, (begin, end) = time.time(), result.span
        part = Part(
            samples=part_samples(game, value_net, params, generation, todo[i], result.records),
            games=result.games,
            moves=result.moves,
            simulations=result.simulations["selfplay"],
            seconds=now - clock["finished"],
            playing_seconds=max(0.0, end - max(begin, clock["played"])),  # parts overlap: count each second once
        )
        clock.update(finished=now, played=max(end, clock["played"]))
        done[todo[i]] = part
        if store is not None:
            store.put(todo[i], part)

    served: dict[str, float] = {}
    if todo:
        label = f"self-play gen {generation}"
        if len(todo) < len(numbers):
            label += f" (resumed: {len(numbers) - len(todo)} of {len(numbers)} parts saved)"
        played = play_matches(
            game.name,
            [selfplay_player(model, params), *([opponent] if opponent else [])],
            [
                (
                    seatings[n],
                    seeds.selfplay_games(params.seed, generation, n),
                    starts and starts[n * size : (n + 1) * size],
                )
                for n in todo
            ],
            parallel=sp.parallel_games,
            workers=workers,
            record_policies=True,
            progress=label if progress else None,
            on_match=finish,
        )
        served = played[0].served
    result = SelfPlayResult.from_parts([done[n] for n in numbers])
    result.served = served
    return result


def playout_targets(
    game, records: list[GameRecord], targets: list[np.ndarray], params: Params, generation: int, part: int
) -> list[np.ndarray]:
    """Per game, (1 - u) each position's value target + u the mean end value (the value scheme,
    absolute seats) of k greedy playouts from that position (`playout_value_weight` u,
    `playout_value_playouts` k), drawn from the part's own stream.

    Why: a position's outcome is one sample of every draw still to come, so its value target is noisy;
    the mean of many greedy playouts is what flat Monte Carlo, the anchor's strongest player, judges a
    position by. Mixed into the target, it teaches the value head that judgement at every position."""
    sp = params.selfplay
    weight, count = sp.playout_value_weight, sp.playout_value_playouts
    if weight == 0:
        return targets
    rng = np.random.default_rng(seeds.playout_targets(params.seed, generation, part))
    mixed = []
    for record, target in zip(records, targets):  # a game at a time: the compiled playouts copy every state
        means = playout_means(game, record.states, [rng] * len(record.states), count, params.value)
        mixed.append((1 - weight) * target + weight * means)
    return mixed


def part_samples(
    game, value_net: NetworkEvaluator | None, params: Params, generation: int, part: int, records: list[GameRecord]
) -> dict:
    """The samples of part `part`'s games, with the strategy's value targets (greedy TD(lambda)'s from
    `value_net`), mixed with greedy playouts' where asked; the network's positions alone."""
    outcomes = end_values(game, records, params)
    records = [own_positions(record) for record in records]
    if params.selfplay.strategy == "greedy_td":
        targets = greedy_td_targets(game, value_net, records, outcomes, params)
    else:
        targets = alphazero_targets(records, outcomes, params.selfplay.root_value_weight)
    targets = playout_targets(game, records, targets, params, generation, part)
    return records_to_samples(game, records, generation, targets)
