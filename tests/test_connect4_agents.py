"""Connect-4 evaluation opponents and the mistakes benchmark: alpha-beta takes wins and blocks
losses and gets stronger with depth; the perfect agent never gives away a won position; the
benchmark counts exactly the moves whose outcome is worse than the best."""

import numpy as np
import pytest

from alphazero_games.connect.experiments.pons import mistake_rates, read_set
from alphazero_games.connect.players.alphabeta import AlphaBetaAgent
from alphazero_games.connect.players.perfect import PerfectConnect4Agent
from alphazero_games.connect.positions import CONNECT4
from alphazero_games.connect.solvers.connect4 import Connect4Solver
from pipeline.games import make_game
from pipeline.matches.arena import pairwise_score, play_games

DATA = CONNECT4
GAME = make_game("connect4")


def position(moves: str):
    state = GAME.initial_state()
    for ch in moves:
        state, _ = GAME.step(state, GAME.parse_move(state, ch))
    return state


def first_move(agent, state, seed=0):
    agent.begin(0, state, np.random.default_rng(seed))
    (action, _), *_ = agent.act([0])
    agent.end(0)
    return action


def test_alphabeta_takes_a_win_and_blocks_a_loss():
    assert first_move(AlphaBetaAgent(GAME, 1), position("121212")) == 0  # column 1 completes four
    assert first_move(AlphaBetaAgent(GAME, 2), position("12121")) == 0  # else the opponent wins there


def test_deeper_alphabeta_beats_shallower():
    deep, shallow = AlphaBetaAgent(GAME, 4), AlphaBetaAgent(GAME, 1)
    records, _ = play_games(GAME, [[deep, shallow], [shallow, deep]] * 6, seed=3)
    assert pairwise_score(records, "alphabeta4", "alphabeta1") > 0.7


def test_the_perfect_agent_keeps_a_won_position():
    state = position("4455")  # the side to move wins (solver score > 0)
    assert Connect4Solver().solve("4455") > 0
    perfect, rival = PerfectConnect4Agent(GAME), AlphaBetaAgent(GAME, 3)
    records, _ = play_games(GAME, [[perfect, rival]] * 2, seed=0, starts=[state, state])
    assert all(r.scores[0] == 1 for r in records)


class SolverEvaluator:
    """Policy logits = exact column scores (negated with `worst`): a perfect or a perfectly bad policy."""

    def __init__(self, worst=False):
        self.solver, self.sign = Connect4Solver(), -1 if worst else 1

    def evaluate(self, states):
        logits = []
        for s in states:
            scores = self.solver.position_column_scores(s.boards[s.mover], s.boards[0] | s.boards[1], s.ply)
            logits.append([self.sign * v if v != -1000 else -1e9 for v in scores])
        return np.array(logits, dtype=np.float32), np.zeros((len(states), 2), dtype=np.float32)


def test_benchmark_counts_mistakes_exactly(tmp_path):
    files = [DATA / "cols_L2_R2.txt", DATA / "Test_L3_R1"]
    perfect = mistake_rates(GAME, SolverEvaluator(), files, 6, [0])
    assert [(r["set"], r["positions"], r["mistakes"]) for r in perfect] == [("Test_L2_R2", 6, 0), ("Test_L3_R1", 6, 0)]
    worst = mistake_rates(GAME, SolverEvaluator(worst=True), files[:1], 6, [0])[0]
    labels = [np.sign([v for v in cols if v != -1000]) for _, cols in read_set(files[0], 6)]
    assert worst["mistakes"] == sum(int(signs.min() < signs.max()) for signs in labels)

    broken = tmp_path / "broken"
    broken.write_text("4453 3\n44x 2\n")
    with pytest.raises(ValueError, match="broken: line 2: expected 'MOVES SCORE'"):
        mistake_rates(GAME, SolverEvaluator(), [broken], None, [0])
