"""Every random stream of a run, named in one place. Each stream is a `numpy.random.SeedSequence`
entropy list that starts with `params.seed`; the numbers after it keep the streams apart, so that no two
uses draw the same numbers. (Until issue 37 they were literals where they were used, and the gate's
game i drew the same stream as self-play's random opening i.)"""

from __future__ import annotations

SELFPLAY_GAMES = 1  # [seed, generation, 1, part]: the games of one self-play part
GATE_GAMES = 2  # [seed, generation, 2]: the gate's games (game i: spawn key i, as every match's)
RANDOM_OPENINGS = 3  # [seed, generation, 3]: the random moves before each self-play game
TEACHER_GAMES = 4  # [seed, 0, 4]: the teacher's games that generation 0 learns from
PLAYOUT_TARGETS = 5  # [seed, generation, 5, part]: the greedy playouts of one self-play part's value targets
SELFPLAY_OPPONENTS = 6  # [seed, generation, 6]: which self-play games seat `selfplay.opponent`, and where
SWEEP_PANEL = 7919  # [seed, 7919, k]: a sweep trial's games against panel member k
SWEEP_VERSUS_BASELINE = 104729  # [seed, 104729]: the best trial against the baseline
SWEEP_CONFIRMATION = 1299709  # [seed, 1299709, k, a, b]: candidate k's network a against baseline network b;
# [seed, 1299709, k]: the bootstrap of candidate k's interval
PLAY_SWEEP = 15485863  # [seed, 15485863, k, r]: every play-time trial's rung r of games against panel member k
POPULATION_MEMBER = 49979687  # [seed, 49979687, m]: population member m's own seed (its games and training)
POPULATION_PANEL = 67867967  # [seed, 67867967, g, k]: every member's games against panel member k at generation g
PLAY_CONFIRMATION = 32452843  # [seed, 32452843, k, b]: block b of the confirmation's games against member k


def selfplay_games(seed: int, generation: int, part: int) -> list[int]:
    return [seed, generation, SELFPLAY_GAMES, part]


def gate_games(seed: int, generation: int) -> list[int]:
    return [seed, generation, GATE_GAMES]


def random_openings(seed: int, generation: int) -> list[int]:
    return [seed, generation, RANDOM_OPENINGS]


def selfplay_opponents(seed: int, generation: int) -> list[int]:
    return [seed, generation, SELFPLAY_OPPONENTS]


def playout_targets(seed: int, generation: int, part: int) -> list[int]:
    return [seed, generation, PLAYOUT_TARGETS, part]


def teacher_games(seed: int) -> list[int]:
    return [seed, 0, TEACHER_GAMES]


def evaluation_match(seed: int, match_key: str) -> list[int]:
    """An evaluation match's games, drawn from the match's own cache key (its players and settings), so
    a match plays the same games whichever other matches run beside it."""
    return [seed, int(match_key[:8], 16)]


def sweep_panel(seed: int, member: int) -> list[int]:
    return [seed, SWEEP_PANEL, member]


def sweep_versus_baseline(seed: int) -> list[int]:
    return [seed, SWEEP_VERSUS_BASELINE]


def sweep_confirmation(seed: int, candidate: int, mine: int, theirs: int) -> list[int]:
    return [seed, SWEEP_CONFIRMATION, candidate, mine, theirs]


def sweep_confirmation_interval(seed: int, candidate: int) -> list[int]:
    return [seed, SWEEP_CONFIRMATION, candidate]


def sweep_sampler(seed: int, worker: int, trials: int) -> list[int]:
    """A sweep worker's sampler, per worker and per restart: a resumed worker must not replay its first
    random samples."""
    return [seed, worker, trials]


def play_sweep_games(seed: int, member: int, rung: int) -> list[int]:
    """The same games for every trial: their differences are the settings', not the deals' (common
    random numbers)."""
    return [seed, PLAY_SWEEP, member, rung]


def play_confirmation_games(seed: int, member: int, block: int) -> list[int]:
    """Games no trial played, the same for every confirmed setting."""
    return [seed, PLAY_CONFIRMATION, member, block]


def play_openings(games: list[int]) -> list[int]:
    """The random openings of a play-time sweep's games drawn from `games` (`sweep.play.opening_plies`)."""
    return [*games, RANDOM_OPENINGS]


def population_member(seed: int, member: int) -> list[int]:
    return [seed, POPULATION_MEMBER, member]


def population_panel(seed: int, generation: int, opponent: int) -> list[int]:
    return [seed, POPULATION_PANEL, generation, opponent]
