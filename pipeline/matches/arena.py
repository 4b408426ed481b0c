"""Play many games at once between any agents, seat by seat, and score the results.

Every job that plays games (self-play, gating, evaluation) goes through `play_games` (in worker
processes, via `parallel.play_match`, which shows the progress): games run side by side so each agent
is asked for all its pending moves in one batched call.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field

import numpy as np

from pipeline.agents.base import Agent
from pipeline.games.contract import GameFault, check_length


@dataclass
class GameRecord:
    seating: list[str]  # agent name per absolute seat
    actions: list[int] = field(default_factory=list)
    movers: list[int] = field(default_factory=list)
    states: list = field(default_factory=list)  # positions where a searched policy was recorded
    policies: list[np.ndarray] = field(default_factory=list)
    policy_movers: list[int] = field(default_factory=list)
    root_values: list[np.ndarray | None] = field(default_factory=list)  # search's value per policy, absolute seats
    scores: np.ndarray | None = None
    final_state: object = None


@dataclass
class MatchStats:
    games: int
    seconds: float
    moves: int


def play_games(
    game,
    seatings: list[list[Agent]],
    seed: int,
    parallel: int = 64,
    record_policies: bool = False,
    first_index: int = 0,
    starts: list | None = None,
) -> tuple[list[GameRecord], MatchStats]:
    """Play one game per seating (a list of agents, one per seat), from the game's initial state or
    from `starts[i]` (an opening); results come back in order.

    Game i of a match draws from its own seed (`seed`, index `first_index + i`), whatever chunk of a
    match it is played in: the dice from one stream, the agents' noise, temperature and search from
    another, so no agent's thinking changes the dice a game is played with.
    """
    started = time.perf_counter()
    seeds = [np.random.SeedSequence(seed, spawn_key=(first_index + i,)) for i in range(len(seatings))]
    records = [GameRecord([a.name for a in seating]) for seating in seatings]
    states: dict[int, object] = {}
    rngs: dict[int, np.random.Generator] = {}  # the agents' randomness
    dice: dict[int, np.random.Generator] = {}  # the game's chance events
    queue = iter(range(len(seatings)))
    moves = 0

    def start_next() -> None:
        gid = next(queue, None)
        if gid is None:
            return
        rngs[gid] = np.random.default_rng(seeds[gid])
        dice[gid] = np.random.default_rng(seeds[gid].spawn(1)[0])
        states[gid] = starts[gid] if starts is not None else game.initial_state(dice[gid])
        for agent in _distinct(seatings[gid]):
            agent.begin(gid, states[gid], rngs[gid])

    for _ in range(min(parallel, len(seatings))):
        start_next()
    try:
        while states:
            by_agent: dict[int, tuple[Agent, list[int]]] = {}
            for gid, state in states.items():
                agent = seatings[gid][game.to_play(state)]
                by_agent.setdefault(id(agent), (agent, []))[1].append(gid)
            for agent, gids in by_agent.values():
                root_value = getattr(agent, "root_value", None)  # only searching agents have one
                for gid, (action, policy) in zip(gids, agent.act(gids)):
                    record, state = records[gid], states[gid]
                    mover = game.to_play(state)
                    after, _ = game.step(state, action, dice[gid])  # a fault here is of move len(actions) + 1
                    if record_policies and policy is not None:
                        record.states.append(state)
                        record.policies.append(policy)
                        record.policy_movers.append(mover)
                        record.root_values.append(root_value(gid) if root_value else None)
                    record.actions.append(action)
                    record.movers.append(mover)
                    state = states[gid] = after
                    moves += 1
                    for other in _distinct(seatings[gid]):
                        other.observe(gid, action, state)
                    if not game.is_terminal(state):
                        check_length(game, len(record.actions))
                    else:
                        record.scores = game.scores(state)
                        record.final_state = state
                        for other in _distinct(seatings[gid]):
                            other.end(gid)
                        del states[gid], rngs[gid], dice[gid]
                        start_next()
    except GameFault as fault:  # a user's game (games/guard.py) broke while these games moved: say when
        move = min((len(records[gid].actions) for gid in states), default=0) + 1
        raise GameFault(f"{fault} (at move {move:,} of a game)") from None
    return records, MatchStats(len(seatings), time.perf_counter() - started, moves)


def _distinct(seating: list[Agent]) -> list[Agent]:
    seen: dict[int, Agent] = {}
    for agent in seating:
        seen.setdefault(id(agent), agent)
    return list(seen.values())


def mixed_seatings(num_players: int) -> list[list[int]]:
    """Every assignment of two players (0 and 1) to the seats in which both take part (2^n - 2)."""
    return [list(picks) for picks in itertools.product([0, 1], repeat=num_players) if 0 < sum(picks) < num_players]


def seat_permutations(players: list[int]) -> list[list[int]]:
    """Every distinct ordering of the given players over the seats (equal entries are one player)."""
    return [list(p) for p in dict.fromkeys(itertools.permutations(players))]


def pairwise_outcomes(records: list[GameRecord], name: str, rival: str) -> dict[str, float]:
    """Shares of (name seat, rival seat) pairs where `name` scored higher, equal, lower (the Connect-4 bot post's
    win / draw / loss rates; for two players exactly the games' results)."""
    counts = np.zeros(3)
    for record in records:
        for i, a in enumerate(record.seating):
            for j, b in enumerate(record.seating):
                if a == name and b == rival:
                    counts[int(np.sign(record.scores[j] - record.scores[i])) + 1] += 1
    shares = counts / counts.sum() if counts.sum() else np.full(3, np.nan)
    return {"win": float(shares[0]), "draw": float(shares[1]), "loss": float(shares[2])}


def pairwise_score(records: list[GameRecord], name: str, rival: str) -> float:
    """Share of (name seat, rival seat) pairs where `name` scored higher; ties count half."""
    outcomes = pairwise_outcomes(records, name, rival)
    return outcomes["win"] + outcomes["draw"] / 2


def mean_score(records: list[GameRecord], name: str) -> float:
    """Mean score per seat played by agent `name`."""
    scores = [r.scores[i] for r in records for i, a in enumerate(r.seating) if a == name]
    return float(np.mean(scores)) if scores else float("nan")


def normal_interval(per_game: np.ndarray) -> tuple[float, float, float]:
    """Mean of per-game values with a normal 95% confidence interval (nan bounds for one game)."""
    mean = float(per_game.mean())
    half_width = 1.96 * per_game.std(ddof=1) / np.sqrt(len(per_game)) if len(per_game) > 1 else float("nan")
    return mean, mean - half_width, mean + half_width


def score_interval(records: list[GameRecord], name: str, rival: str) -> dict[str, float]:
    """`pairwise_score` over the games with a 95% Wilson score interval over per-game scores (nan bounds for
    one game)."""
    mean, low, high = wilson_interval(np.array([pairwise_score([r], name, rival) for r in records]))
    return {"score": mean, "ci95_low": low, "ci95_high": high, "games": len(records)}


def wilson_interval(per_game: np.ndarray) -> tuple[float, float, float]:
    """Mean of per-game scores in [0, 1] with a 95% Wilson score interval (nan bounds for one game). A
    score in [0, 1] of mean p (ties 0.5, shares of pairs where more players sit) has a variance of at most
    p (1 - p), a win-or-loss game's (Bhatia-Davis), so the Wilson interval, the p whose score test at that
    variance passes, keeps its coverage (conservatively where ties are many), lies inside [0, 1] and keeps
    a width where every game went one way. The normal interval from the games' own spread did neither:
    -0.48..1.48 for one win and one loss, no width at all for five wins."""
    games, mean = len(per_game), float(per_game.mean())
    if games < 2:
        return mean, float("nan"), float("nan")
    z2 = 1.96**2
    center = (mean + z2 / (2 * games)) / (1 + z2 / games)
    half_width = np.sqrt(z2 * mean * (1 - mean) / games + z2 * z2 / (4 * games**2)) / (1 + z2 / games)
    # bounded as well as the roots are: at a mean of 0 or 1, rounding puts one a hair outside
    return mean, max(float(center - half_width), 0.0), min(float(center + half_width), 1.0)


def difference_interval(records: list[GameRecord], name: str, rival: str) -> tuple[float, float, float]:
    """Own mean score minus the rival's (Petosa & Balch's fig. 3b), with a normal 95% interval over games: each
    game gives `name`'s mean score in it less `rival`'s (where every game seats them alike, as fig. 3's
    seatings do, the mean is `mean_score` less the rival's)."""
    per_game = [
        np.mean([r.scores[i] for i, a in enumerate(r.seating) if a == name])
        - np.mean([r.scores[i] for i, a in enumerate(r.seating) if a == rival])
        for r in records
    ]
    return normal_interval(np.array(per_game))
