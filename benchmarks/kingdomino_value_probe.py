"""What Kingdomino networks have learnt of the points race, without playing a match: on the positions of
`--games` player-greedy games (seeded), the correlation of the value head's entry for the mover with the
mover's points lead over the mean of the others (read off the property-crowns planes), all positions and
the game's last 3/8 (past ply 60 of 4 players' 96); how often the raw policy picks the greedy player's
placement and pick; and, one move ahead, how often the move whose resulting position the value head
rates best is one of the greedy player's best (placements: the most points; picks: the domino whose best
placement scores most, the correlation of the two ratings alongside). Prints one JSON line per
checkpoint.

Usage: python benchmarks/kingdomino_value_probe.py CHECKPOINT... [--players 4] [--games 12] [--seed 5]"""

import argparse
import json

import numpy as np
import torch

from pipeline.games import make_game
from pipeline.games.kingdomino.rules import TERRAINS
from pipeline.nets.checkpoint import checkpoint_game, load_checkpoint

PROPERTY_CROWNS = len(TERRAINS) + 1  # a seat's plane after its terrains and crowns: its points, square by square

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("checkpoints", nargs="+")
parser.add_argument("--players", type=int, default=4)
parser.add_argument("--games", type=int, default=12)
parser.add_argument("--seed", type=int, default=5)
args = parser.parse_args()
torch.set_num_threads(1)
game = make_game(f"kingdomino(players={args.players})")
rng = np.random.default_rng(args.seed)
states, greedy = [], []
for _ in range(args.games):
    state = game.initial_state(rng)
    while not game.is_terminal(state):
        states.append(state)
        greedy.append(game.greedy_action(state))
        state = game.step(state, greedy[-1], rng)[0]
greedy = np.array(greedy)
late = np.array([game.ply(state) for state in states]) > 2 * game.deck_size * 5 / 8
placing = np.array([state.placing for state in states])
legal = np.stack([game.legal_mask(state) for state in states])


def yardstick(state, action, child) -> int:
    """The greedy player's rating of a move: points after a placement, a pick's domino's best placement."""
    mover = game.to_play(state)
    if state.placing:
        return game.points(child.kingdoms[mover])
    return game._best_placement(state.kingdoms[mover], state.next_row[action - game.first_pick])[1]


# one move ahead: every decision whose moves the yardstick tells apart, with each move's next position
choices = []
for state in states:
    actions = game.legal_actions(state)
    children = [game.step(state, action, np.random.default_rng(0))[0] for action in actions]
    ratings = np.array([yardstick(state, a, child) for a, child in zip(actions, children)], dtype=float)
    if ratings.std() > 0:
        choices.append((state.placing, game.to_play(state), children, ratings))


def one_move_ahead(network, game_view) -> dict:
    """Share of decisions where the value head's favourite next position is one of the yardstick's best."""
    hits, correlations = {True: [], False: []}, []
    for is_placing, mover, children, ratings in choices:
        with torch.no_grad():
            values = network(torch.from_numpy(game_view.encode_batch(children)))[1].numpy()
        seats = [(mover - game.to_play(child)) % game.num_players for child in children]
        mine = values[np.arange(len(children)), seats]
        hits[is_placing].append(ratings[mine.argmax()] == ratings.max())
        if not is_placing:
            correlations.append(np.corrcoef(mine, ratings)[0, 1])
    return {
        "value_best_placement_is_greedy": round(float(np.mean(hits[True])), 3),
        "value_best_pick_is_greedy": round(float(np.mean(hits[False])), 3),
        "value_pick_corr": round(float(np.nanmean(correlations)), 3),
        "decisions": [len(hits[True]), len(hits[False])],
    }


for path in args.checkpoints:
    view = make_game(checkpoint_game(path))  # the game as the network sees it: with or without `fit`
    if view.num_players != game.num_players:
        parser.error(f"{path}: trained for {view.name}, not {args.players} players (--players)")
    network = load_checkpoint(path, view.name)
    planes = view.encode_batch(states)
    per_seat = (view.observation_shape[0] - view.constant_planes()) // game.num_players  # the kingdoms' planes
    seat_points = planes[:, PROPERTY_CROWNS : game.num_players * per_seat : per_seat].sum(axis=(2, 3))
    lead = seat_points[:, 0] - seat_points[:, 1:].mean(axis=1)  # the mover is seat 0 of the network's view
    with torch.no_grad():
        logits, values = network(torch.from_numpy(planes))
    raw = np.where(legal, logits.numpy(), -np.inf).argmax(axis=1)
    mover = values[:, 0].numpy()
    figures = {
        "checkpoint": path,
        "positions": len(states),
        "value_lead_corr": round(float(np.corrcoef(mover, lead)[0, 1]), 3),
        "value_lead_corr_late": round(float(np.corrcoef(mover[late], lead[late])[0, 1]), 3),
        "raw_policy_greedy_placement": round(float((raw == greedy)[placing].mean()), 3),
        "raw_policy_greedy_pick": round(float((raw == greedy)[~placing].mean()), 3),
        **one_move_ahead(network, view),
    }
    print(json.dumps(figures), flush=True)
