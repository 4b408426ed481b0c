"""What Kingdomino networks have learnt of the points race, without playing a match: on the positions of
`--games` player-greedy 4-player games (seeded), the correlation of the value head's entry for the mover
with the mover's points lead over the mean of the others (read off the property-crowns planes), all
positions and past ply 60; and how often the raw policy picks the greedy player's placement and pick.
Prints one JSON line per checkpoint.

Usage: python benchmarks/kingdomino_value_probe.py CHECKPOINT... [--games 12] [--seed 5]"""

import argparse
import json

import numpy as np
import torch

from pipeline.games import make_game
from pipeline.games.kingdomino import TERRAINS
from pipeline.nets.checkpoint import load_checkpoint

PROPERTY_CROWNS = len(TERRAINS) + 1  # a seat's plane after its terrains and crowns: its points, square by square

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("checkpoints", nargs="+")
parser.add_argument("--games", type=int, default=12)
parser.add_argument("--seed", type=int, default=5)
args = parser.parse_args()
torch.set_num_threads(1)
game = make_game("kingdomino(players=4)")
rng = np.random.default_rng(args.seed)
states, greedy = [], []
for _ in range(args.games):
    state = game.initial_state(rng)
    while not game.is_terminal(state):
        states.append(state)
        greedy.append(game.greedy_action(state))
        state = game.step(state, greedy[-1], rng)[0]
greedy = np.array(greedy)
planes = game.encode_batch(states)
per_seat = (game.observation_shape[0] - game.constant_planes) // game.num_players  # the kingdoms' planes
seat_points = planes[:, PROPERTY_CROWNS : game.num_players * per_seat : per_seat].sum(axis=(2, 3))
lead = seat_points[:, 0] - seat_points[:, 1:].mean(axis=1)  # the mover is seat 0 of the network's view
late = np.array([game.ply(state) for state in states]) > 60
placing = np.array([state.placing for state in states])
legal = np.stack([game.legal_mask(state) for state in states])
for path in args.checkpoints:
    network = load_checkpoint(path, game.name)
    with torch.no_grad():
        logits, values = network(torch.from_numpy(planes))
    raw = np.where(legal, logits.numpy(), -np.inf).argmax(axis=1)
    mover = values[:, 0].numpy()
    figures = {
        "checkpoint": path,
        "positions": len(states),
        "value_lead_corr": round(float(np.corrcoef(mover, lead)[0, 1]), 3),
        "value_lead_corr_after_ply_60": round(float(np.corrcoef(mover[late], lead[late])[0, 1]), 3),
        "raw_policy_greedy_placement": round(float((raw == greedy)[placing].mean()), 3),
        "raw_policy_greedy_pick": round(float((raw == greedy)[~placing].mean()), 3),
    }
    print(json.dumps(figures), flush=True)
