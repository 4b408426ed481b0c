"""Search's compiled expansion (`pipeline/games/compiled.py`, `mcts.py`'s `_find_leaves_compiled`): the
games' compiled rules say what their Python rules say, and self-play with a real network plays the same games,
move for move and visit for visit, compiled as plain; games without compiled rules keep the plain search."""

import dataclasses
import random

import numba as nb
import numpy as np
import pytest
import torch

from pipeline.agents.search_agent import PlayConfig, SearchAgent
from pipeline.games import make_game, pcg64
from pipeline.games.base import CompilesRules, offers
from pipeline.games.compiled import CompiledRules
from pipeline.games.contract import GameFault, check_contract
from pipeline.matches.arena import play_games
from pipeline.nets.network_evaluator import NetworkEvaluator
from pipeline.nets.senet import SENet
from pipeline.nets.shape import NetworkShape
from pipeline.search import BatchedSearch, CachingEvaluator, SearchConfig, UniformEvaluator

COMPILED_GAMES = ["tictactoe", "tictacmo", "connect4", "connect3x3"]
CHANCE_GAMES = [
    "kingdomino(players=4,fit=1)",
    "kingdomino(players=3)",
    "kingdomino(players=2,size=7,middle=1,harmony=1)",
]


@pytest.mark.parametrize("name", COMPILED_GAMES + CHANCE_GAMES)
def test_compiled_rules_say_what_the_rules_say(name):
    """Over random games: a state's row and back, the mover, the legal mask, the planes and each step; a
    chance move's result drawn as the rules draw it from the same generator."""
    game = make_game(name)
    rules = game.compiled_rules()
    choose = random.Random(84)
    one = np.zeros(1, dtype=np.int64)  # every function takes a batch of nodes: here node 0 from node 1
    seat, action, chance = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.bool_)
    mask = np.ones((2, game.num_actions), dtype=np.bool_)  # set: the compiled mask clears what it does not allow
    planes = np.ones((1, *game.observation_shape), dtype=np.float32)
    draws = 0
    for g in range(30 if name in COMPILED_GAMES else 4):
        state = game.initial_state(np.random.default_rng(g))
        while True:
            rows = np.stack([np.zeros(rules.width, dtype=np.int64), rules.to_row(state)])
            assert rules.from_row(rows[1]) == state
            rules.mover(rules.shape, rows, one + 1, 1, seat)
            if game.is_terminal(state):
                assert seat[0] == -1
                break
            assert seat[0] == game.to_play(state)
            rules.legal(rules.shape, rows, one + 1, 1, mask)
            assert mask[1].tolist() == game.legal_mask(state).tolist()
            rules.encode(rules.shape, rows, one + 1, 1, planes)
            assert np.array_equal(planes[0], game.encode(state))
            action[0] = choose.choice(game.legal_actions(state))
            if rules.chance is not None:
                rules.chance(rules.shape, rows, one + 1, action, 1, chance)
            state, key = game.step(state, int(action[0]), np.random.default_rng([g, state.ply]))
            assert chance[0] == (key is not None)
            if key is None:
                rules.step(rules.shape, rows, one + 1, action, one, 1)
            else:
                draws += 1
                generator, lent = (np.random.default_rng([g, state.ply - 1]) for _ in range(2))
                drawn = rules.draw(rows[1], generator)
                assert drawn == key and len(key) == rules.key_width
                streams, keys = pcg64.streams([lent]), np.zeros((1, rules.key_width), dtype=np.int64)
                rules.draw_keys(rules.shape, rows, one + 1, streams, one, 1, keys)
                pcg64.store(streams, [lent])
                assert tuple(keys[0].tolist()) == key  # compiled from the lent generator, which goes on as drawn
                assert lent.integers(2**62, size=3).tolist() == generator.integers(2**62, size=3).tolist()
                rules.outcome(rules.shape, rows, one + 1, action, np.array([drawn]), one, 1)
            assert rules.from_row(rows[0]) == state
            assert np.array_equal(rows[0], rules.to_row(state))  # one row a state: the position cache's key
    assert draws > 0 or name in COMPILED_GAMES


def network_player(game, search: SearchConfig, compiled: bool) -> SearchAgent:
    """A self-play player of a small random network, in ONNX Runtime behind the position cache."""
    torch.manual_seed(84)  # the same weights for both players
    model = SENet(NetworkShape.for_game(game, 1, 8, 2)).eval()
    evaluator = CachingEvaluator(NetworkEvaluator(game, model, runtime="onnxruntime"))
    play = PlayConfig(simulations=24, add_noise=True, temperature_moves=4)
    return SearchAgent(game, evaluator, search, play, "net", compiled=compiled)


SEARCHES = {
    "puct": SearchConfig(),
    "parallel-leaves": SearchConfig(parallel_leaves=3, fpu_reduction=0.3),
    "gumbel": SearchConfig(root="gumbel"),
    "fixed-outcomes": SearchConfig(chance_outcomes="fixed", max_chance_children=2),  # Kingdomino's only
    "evicted-outcomes": SearchConfig(max_chance_children=2),  # Kingdomino's only
    "greedy-playouts": SearchConfig(greedy_playout_weight=0.5, greedy_playouts=2),  # Kingdomino's only
}
SELF_PLAY_CASES = [
    pytest.param(name, search, id=f"{name}-{kind}")
    for name in ["tictacmo", "connect4", "connect3x3", "kingdomino(players=2)", CHANCE_GAMES[0]]
    for kind, search in SEARCHES.items()
    if kind in ("puct", "parallel-leaves", "gumbel") or name.startswith("kingdomino")
]


def test_compiled_search_draws_from_other_generators_in_python_as_the_plain_search():
    """A tree whose generator is not numpy's default (which `pcg64.py` follows) draws its chance outcomes by
    the rules' `draw`: the same trees as the plain search grows."""
    game = make_game("kingdomino(players=2)")
    trees = []
    for compiled in (True, False):
        engine = BatchedSearch(game, UniformEvaluator(game), SearchConfig(max_chance_children=2), compiled=compiled)
        forest = engine.new_forest(512, 2)
        slots = [
            forest.new_tree(game.initial_state(np.random.default_rng(g)), np.random.Generator(np.random.MT19937(g)))
            for g in range(2)
        ]
        engine.run(forest, slots, 150)
        trees.append([forest.visits[forest.roots[slot]].tolist() for slot in slots] + [forest.used.tolist()])
    assert trees[0] == trees[1]


@pytest.mark.parametrize("name, search", SELF_PLAY_CASES)
def test_compiled_self_play_plays_the_plain_search_games(name, search):
    game = make_game(name)
    games = {}
    for compiled in (True, False):
        player = network_player(game, search, compiled)
        assert (player.forest.rules is not None) == compiled
        records, _ = play_games(game, [[player] * game.num_players] * 6, seed=84, parallel=6, record_policies=True)
        games[compiled] = records
    for fast, plain in zip(games[True], games[False]):
        assert fast.actions == plain.actions
        assert all(np.array_equal(a, b) for a, b in zip(fast.policies, plain.policies))
        assert all(np.array_equal(a, b) for a, b in zip(fast.root_values, plain.root_values))


def test_games_without_compiled_rules_keep_the_plain_search():
    game = make_game("pig(players=2,goal=20)")
    assert not offers(game, CompilesRules)
    player = SearchAgent(game, UniformEvaluator(game), SearchConfig(), PlayConfig(simulations=8), "uniform")
    assert player.search.rules is None and player.forest.rules is None
    records, _ = play_games(game, [[player] * game.num_players], seed=1, parallel=1)
    assert records[0].scores is not None


@nb.njit
def _no_move(shape, rows, nodes, count, out):
    for i in range(count):
        out[nodes[i]] = False


def test_compiled_rules_that_leave_no_move_are_the_games_fault_in_one_line():
    """A user's compiled rules whose legal mask is empty in a game that goes on: one line naming the game."""
    game = make_game("tictactoe")
    rules = game.compiled_rules()
    broken = CompiledRules(
        rules.width, rules.shape, rules.to_row, rules.from_row, rules.step, rules.mover, _no_move, rules.encode
    )
    engine = BatchedSearch(game, UniformEvaluator(game), SearchConfig())
    engine.rules = broken
    forest = engine.new_forest(32, 1)
    slot = forest.new_tree(game.initial_state(), np.random.default_rng(0))
    with pytest.raises(GameFault) as fault:
        engine.run(forest, [slot], 8)
    assert "tictactoe" in str(fault.value) and "no legal move" in str(fault.value) and "\n" not in str(fault.value)


PLUGIN = """
import numba as nb

from alphazero_games.connect.rules import ConnectGame
from pipeline.games.compiled import CompiledRules


class Honest(ConnectGame):
    def __init__(self):
        super().__init__("honest", rows=3, cols=3, k=3, num_players=2, gravity=False)


@nb.njit
def every_cell(shape, rows, nodes, count, out):
    for i in range(count):
        out[nodes[i]] = True


class Lying(Honest):
    def compiled_rules(self):
        rules = super().compiled_rules()
        return CompiledRules(
            rules.width, rules.shape, rules.to_row, rules.from_row, rules.step, rules.mover, every_cell, rules.encode
        )
"""


@pytest.fixture
def compiled_plugin(tmp_path, monkeypatch):
    """A user's game with compiled rules, in a folder of the user's on Python's path."""
    (tmp_path / "compiled_plugin.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))


def test_a_plugins_compiled_rules_are_checked_and_run_compiled(compiled_plugin):
    """A plugin's compiled rules that say another legal mask than its rules: one line before it plays;
    honest ones pass and self-play runs compiled, through the guard."""
    with pytest.raises(GameFault) as fault:
        make_game("compiled_plugin:Lying")
    line = str(fault.value)
    assert "compiled_rules: legal gave another mask than legal_mask" in line and "\n" not in line
    game = make_game("compiled_plugin:Honest")
    player = SearchAgent(game, UniformEvaluator(game), SearchConfig(), PlayConfig(simulations=16), "uniform")
    assert player.forest.rules is not None
    records, _ = play_games(game, [[player] * 2] * 2, seed=1, parallel=2)
    assert all(record.scores is not None for record in records)


def test_compiled_chance_that_draws_otherwise_than_the_rules_is_one_line():
    """Compiled rules whose draw takes another row than the game's `step` from the same generator (the
    search would explore draws the game never makes): the contract's one line, naming the draw."""
    game = make_game("kingdomino(players=2)")
    rules = game.compiled_rules()

    def front_of_the_deck(row, rng):
        return tuple(sorted(rules.draw(row, None)))

    game.compiled_rules = lambda: dataclasses.replace(rules, draw=front_of_the_deck)
    with pytest.raises(GameFault) as fault:
        check_contract(game)
    line = str(fault.value)
    assert "compiled_rules: draw gave" in line and "kingdomino" in line and "\n" not in line
    game.compiled_rules = lambda: dataclasses.replace(rules, chance=None)
    with pytest.raises(GameFault, match="compiled_rules: chance says move .* has no random result"):
        check_contract(game)


def test_compiled_search_encodes_only_the_positions_the_cache_lacks():
    """Each leaf the position cache answers is never encoded: over two searches of one root, the second
    all answered from the cache, the leaves encoded are exactly the positions the network judged."""
    game = make_game("connect4")
    torch.manual_seed(84)
    evaluator = CachingEvaluator(NetworkEvaluator(game, SENet(NetworkShape.for_game(game, 1, 8, 2)).eval()))
    engine = BatchedSearch(game, evaluator, SearchConfig())
    rules, encoded = engine.rules, []

    def counted(shape, rows, nodes, count, out):
        encoded.append(count)
        rules.encode(shape, rows, nodes, count, out)

    engine.rules = dataclasses.replace(rules, encode=counted)
    searched = []
    for _ in range(2):
        forest = engine.new_forest(256, 1)
        slot = forest.new_tree(game.initial_state(), np.random.default_rng(0))
        engine.run(forest, [slot], 64)
        searched.append((forest.root_visits(slot), sum(encoded)))
    (visits, first), (again, second) = searched
    assert np.array_equal(visits, again)
    assert first == len(evaluator.cache) - 1 > 0  # every position judged but the root (encoded apart)
    assert second == first and evaluator.hits >= 64
