"""Leaf values mixed with player-greedy playouts (`search.greedy_playout_weight`, AlphaGo's lambda):
what a leaf is worth, reproducibility beside other games, and the player made from params."""

import json

import numpy as np
import pytest
import yaml

from pipeline.config import ValueParams
from pipeline.games import make_game
from pipeline.search import BatchedSearch, Forest, SearchConfig, UniformEvaluator
from pipeline.search.playouts import greedy_outcomes


def late_position(game, seed: int):
    """A 2-player position with eight dominoes left in the deck: a few rounds, and draws, to the end."""
    rng = np.random.default_rng(seed)
    state = game.initial_state(rng)
    while len(state.deck) > 8:
        state, _ = game.step(state, game.greedy_action(state), rng)
    return state


@pytest.mark.parametrize("weight", [0.5, 1.0])
def test_a_leaf_is_worth_the_mix_of_the_network_and_one_greedy_playout(weight):
    """The evaluator says 0 for every seat, so a leaf's value is `weight` times the end value of the
    greedy playout drawn from its tree's generator: the same one a fresh generator of that seed plays."""
    from pipeline.games.values import outcome_value

    game = make_game("kingdomino(players=2)")
    state = late_position(game, 0)
    config = SearchConfig(value=ValueParams(scheme="pairwise_rank"), greedy_playout_weight=weight)
    forest = Forest(game, 16, end_value=config.end_value(game))
    slot = forest.new_tree(state, np.random.default_rng(7))
    BatchedSearch(game, UniformEvaluator(game), config).prepare_roots(forest, [slot], [False])
    scores, margins = greedy_outcomes(game, [state], [np.random.default_rng(7)])
    played = outcome_value(scores, margins, game.margin_scale(), "pairwise_rank")[0]
    assert np.abs(played).max() == 1.0, "the playout reached an end with a winner"
    assert forest.raw_values[forest.roots[slot]].tolist() == (weight * played).tolist()


def test_a_leaf_with_several_playouts_is_worth_their_mean():
    """`search.greedy_playouts: 3`: the leaf's value is half (the weight) the mean end value of three
    greedy playouts drawn one after another from its tree's generator, the ones a fresh generator of
    that seed plays (by margin, so that three playouts' values differ)."""
    from pipeline.games.values import outcome_value

    game = make_game("kingdomino(players=2)")
    state = late_position(game, 0)
    config = SearchConfig(value=ValueParams(scheme="margin"), greedy_playout_weight=0.5, greedy_playouts=3)
    forest = Forest(game, 16, end_value=config.end_value(game))
    slot = forest.new_tree(state, np.random.default_rng(7))
    BatchedSearch(game, UniformEvaluator(game), config).prepare_roots(forest, [slot], [False])
    rng = np.random.default_rng(7)
    scores, margins = greedy_outcomes(game, [state] * 3, [rng] * 3)
    played = outcome_value(scores, margins, game.margin_scale(), "margin")
    assert len({tuple(value) for value in played}) == 3, "each playout drew rows of its own"
    assert np.allclose(forest.raw_values[forest.roots[slot]], 0.5 * played.mean(axis=0))


def test_a_tree_searches_alike_alone_and_beside_other_games():
    """Each playout draws from its own tree's generator, so the games sharing a batch change nothing."""
    game = make_game("kingdomino(players=2)")
    config = SearchConfig(greedy_playout_weight=0.5)
    first, second = late_position(game, 0), late_position(game, 1)

    def visits(states):
        forest = Forest(game, 2 * 40 + 2, len(states), config.end_value(game))
        slots = [forest.new_tree(s, np.random.default_rng(7 + i)) for i, s in enumerate(states)]
        BatchedSearch(game, UniformEvaluator(game), config).run(forest, slots, 40)
        return forest.root_visits(slots[0]).tolist()

    assert visits([first]) == visits([first, second])


def test_a_game_without_a_greedy_player_is_refused_in_search():
    with pytest.raises(ValueError, match="search.greedy_playout_weight: game 'connect4' has no player-greedy policy"):
        BatchedSearch(
            make_game("connect4"), UniformEvaluator(make_game("connect4")), SearchConfig(greedy_playout_weight=1)
        )


def test_match_plays_a_network_with_playouts_from_params(tmp_path, capsys):
    """The params' weight reaches the network's search through `match --params`; the same seed, the same
    games (a timed player aside, every player here is seeded)."""
    import torch

    from pipeline.agents.recipes import search_config
    from pipeline.commands.match import main
    from pipeline.config import parse_params
    from pipeline.nets.checkpoint import save_checkpoint
    from pipeline.nets.senet import NetworkShape, SENet

    game = make_game("kingdomino(players=2)")
    data = {
        "game": game.name,
        "workers": 1,
        "search": {"greedy_playout_weight": 0.5},
        "generations": [{"gen": 1, "prev": 0}],
    }
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(data))
    torch.manual_seed(0)
    save_checkpoint(tmp_path / "net.ckpt", SENet(NetworkShape.for_game(game, 1, 8, 2)), game.name)
    args = [str(tmp_path / "net.ckpt"), "greedy", "--games-per-seating", "1", "--simulations", "4", "--json"]
    scores = []
    for _ in range(2):
        main([*args, "--params", str(tmp_path / "params.yaml")])
        scores.append(json.loads(capsys.readouterr().out))
    assert scores[0] == scores[1] and scores[0]["games"] == 2
    assert search_config(parse_params(data)).greedy_playout_weight == 0.5  # every network player's search
