"""Play against the champion in the terminal: `python -m pipeline play [CHECKPOINT | NAME | --champion] [--seats ...]`.

The network is a checkpoint file, a shipped champion's NAME (`python -m pipeline play connect4`; the
card's summary is printed first), `best` (the network the run in this folder ended with, as in `match`)
or `--champion`, the MLflow registry's (as in `analyse`).

`--seats` lists who sits in each seat, in seat order: `human` (a person typing moves on standard
input), `az` (AlphaZero search with the network), `uct` (classic UCT with random rollouts), `random`, or
in games with a player-greedy policy (Kingdomino) `greedy` and `mce:N` (flat Monte Carlo, N greedy
playouts a move); `az` and `uct` take an optional budget, `az:200`, `uct:1000` (default `--simulations`),
and `az`, `uct` and `mce` may move by time instead, `az:2s`, `mce:500ms`. Any game, any
number of people: `human,az,az` or `az,human,human` for Tic-Tac-Mo. Seats not named are `az` (`uct`
without a network), so `human,az` also plays a three-player game; the default seats the person first.
Before each human move the board (empty cells numbered as they are typed) and "You are X" are shown;
moves are typed in the game's notation (`7` for a Tic-Tac-Mo cell, `4` for a Connect-4 column,
`roll`/`hold` in Pig, `e4r` (first half on e4, second to its right) then `p2` (pick the second
domino of the next row) in Kingdomino); a bad one gets a message and a new prompt. Agents play their best move (no
noise, no sampling); dice are rolled from `--seed`. When the game ends the final board, every seat's
score and the winner are printed; Ctrl-C ends the game with status 130. Without a network (no
CHECKPOINT, no --champion) `--game` names the game and only `human`, `uct` and `random` seats can play.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import numpy as np

from pipeline import champions
from pipeline.agents.base import Agent, RandomAgent
from pipeline.agents.names import SEATS, PlayerName, baseline_spec, parse_player
from pipeline.commands.cli import add_simulations, command_parser, out_of_range
from pipeline.commands.networks import add_network_arguments, load_network, network_params
from pipeline.config import MAX_SEED, MAX_SIMULATIONS
from pipeline.games import Game, IllegalMove
from pipeline.games.base import DrawsSeats, offers
from pipeline.games.contract import GameFault, check_length
from pipeline.harness.entry import entry_point

if TYPE_CHECKING:
    from pipeline.search import SearchConfig


QUIT_WORDS = ("quit", "exit")  # no game's notation writes a move so


class HumanAgent:
    """A person at the terminal behind the `Agent` interface, so the game loop treats every seat alike."""

    def __init__(self, game: Game, name: str, seat: int):
        self.game, self.name, self.seat, self.state = game, name, seat, None

    def begin(self, game_id, state, rng):
        self.state = state

    def act(self, game_ids):
        legal = " ".join(self.game.format_move(a) for a in self.game.legal_actions(self.state))
        print(self.game.render(self.state))
        print(f"You are {seat_label(self.game, self.seat)}.")
        while True:
            print(f"{self.name} to move [{legal}] (or quit): ", end="", flush=True)
            line = sys.stdin.readline()
            if not line:
                raise SystemExit("error: the input ended before the game did")
            if not sys.stdin.isatty():
                print(line.strip())  # piped moves read like a transcript
            if line.strip().lower() in QUIT_WORDS:
                print(f"{self.name} left the game at move {self.game.ply(self.state) + 1}")
                raise SystemExit(0)
            try:
                return [(self.game.parse_move(self.state, line), None)]
            except IllegalMove as err:
                print(f"illegal move: {err}; try again")

    def observe(self, game_id, action, state):
        self.state = state

    def end(self, game_id):
        self.state = None


def seat_label(game: Game, seat: int) -> str:
    """`X (seat 0)` where the board draws seats as symbols, else `seat 0`."""
    return f"{game.seat_symbol(seat)} (seat {seat})" if offers(game, DrawsSeats) else f"seat {seat}"


def seat_names(text: str, simulations: int = 50) -> list[PlayerName]:
    """`human,az:200,uct` -> the players of the grammar (`pipeline/agents/names.py`), az and uct
    without N searching `simulations`; ValueError with one line on anything else."""
    try:
        return [parse_player(word, SEATS, default_number=simulations) for word in text.split(",")]
    except ValueError as err:
        raise ValueError(f"--seats: {err}") from None


def parse_seats(text: str, num_players: int, fill: str = "az", simulations: int = 50) -> list[PlayerName]:
    """`seat_names`, with the seats not named filled with `fill`; ValueError with one line where they
    are more than the game's players."""
    seats = seat_names(text, simulations)
    if len(seats) > num_players:
        raise ValueError(f"--seats names {len(seats)} seats, but the game has {num_players} players")
    return seats + [parse_player(fill, SEATS, default_number=simulations)] * (num_players - len(seats))


def make_agents(
    game: Game, seats: list[PlayerName], model, seed: int, config: SearchConfig | None = None
) -> list[Agent]:
    """The players at the table; az seats are the champion (`recipes.champion_play`) searching with
    `config`, the network's own search settings (`networks.network_params`)."""
    # the search and the networks (torch) are imported here, after every argument's one-line error
    from pipeline.agents.recipes import champion_play
    from pipeline.agents.search_agent import SearchAgent, uct_agent
    from pipeline.nets.network_evaluator import NetworkEvaluator
    from pipeline.search import SearchConfig

    config = config or SearchConfig()
    evaluator = NetworkEvaluator(game, model, runtime=config.runtime, device=config.device) if model else None
    agents = []
    for seat, player in enumerate(seats):
        name = f"seat {seat} ({player.kind})"
        if player.kind == "human":
            agents.append(HumanAgent(game, name, seat))
        elif player.kind == "az":
            play = champion_play(*player.budget())
            agents.append(SearchAgent(game, evaluator, config, play, name))
        elif player.kind == "uct":
            simulations, seconds = player.budget()
            agents.append(uct_agent(game, simulations, seed=seed + seat, name=name, seconds=seconds))
        elif player.kind in ("mce", "greedy"):
            agents.append(baseline_spec(player, name, 0.0, seed + seat).build(game))
        else:
            agents.append(RandomAgent(game, name))
    return agents


def play_game(game: Game, agents: list[Agent], seed: int) -> np.ndarray:
    """One game, announcing every move; returns the scores (absolute seats)."""
    dice = np.random.default_rng([seed, 1])  # chance events from a stream of their own, as in the arena
    state = game.initial_state(dice)
    for seat, agent in enumerate(agents):
        agent.begin(0, state, np.random.default_rng([seed, 2, seat]))
    plies = 0
    try:
        while not game.is_terminal(state):
            mover = agents[game.to_play(state)]
            [(action, _)] = mover.act([0])
            state, chance = game.step(state, action, dice)
            outcome = "" if chance is None else f" (chance: {chance})"
            print(f"{mover.name} plays {game.format_move(action)}{outcome}", flush=True)
            for agent in agents:
                agent.observe(0, action, state)
            plies += 1
            if not game.is_terminal(state):
                check_length(game, plies)
    except GameFault as fault:  # a user's game (games/guard.py) broke at this move
        raise GameFault(f"{fault} (at move {plies + 1:,})") from None
    for agent in agents:
        agent.end(0)
    print(game.render(state))
    return game.scores(state)


def result_line(game: Game, agents: list[Agent], scores: np.ndarray) -> str:
    """Who won: the seats with the best score, or a draw when every seat scores the same."""
    best = [seat for seat, score in enumerate(scores) if score == scores.max()]
    if len(best) == len(scores):
        return "draw"
    symbol = offers(game, DrawsSeats)
    names = ", ".join(agents[s].name + (f" playing {game.seat_symbol(s)}" if symbol else "") for s in best)
    return ("winner: " if len(best) == 1 else "winners: ") + names


@entry_point
def main(argv):
    parser = command_parser("play", __doc__)
    add_network_arguments(parser)
    parser.add_argument("--seats", help="who sits where, e.g. human,az or az,human,uct:500 (default human,az,...)")
    add_simulations(parser, "--sims", default=50, help="search budget of az and uct seats without their own")
    parser.add_argument("--seed", type=int, default=0, help="dice and the random players")
    args = parser.parse_args(argv)
    if problem := out_of_range(1, MAX_SIMULATIONS, {"--simulations": args.simulations}) or out_of_range(
        0, MAX_SEED, {"--seed": args.seed}
    ):
        parser.error(problem)
    try:  # the names before the network's torch is imported, and their number against its game
        seat_names(args.seats or "human", args.simulations)
    except ValueError as err:
        parser.error(str(err))
    game, model = load_network(parser, args, lambda game: parse_seats(args.seats or "human", game.num_players))
    if args.checkpoint and (name := champions.shipped_name(args.checkpoint)):
        print(champions.summary(name), flush=True)
    try:
        fill = "az" if model is not None else "uct"
        seats = parse_seats(args.seats or "human", game.num_players, fill, args.simulations)
    except ValueError as err:
        parser.error(str(err))
    if model is None and any(player.kind == "az" for player in seats):
        parser.error("az seats need a network: give a CHECKPOINT or --champion (or seat uct, random)")
    from pipeline.agents.recipes import search_config  # torch: after the arguments' checks

    config = search_config(network_params(args.params, args.checkpoint, game.name))
    agents = make_agents(game, seats, model, args.seed, config)
    print("seats: " + ", ".join(agent.name for agent in agents), flush=True)
    scores = play_game(game, agents, args.seed)
    print("scores: " + ", ".join(f"{agent.name} {score:+g}" for agent, score in zip(agents, scores)))
    print(result_line(game, agents, scores))


if __name__ == "__main__":
    main()
