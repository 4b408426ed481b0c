"""Players as recipes that cross process boundaries: an `AgentSpec` names a kind of player, its
settings and (for networks) the weights, and builds the player in whichever worker plays it."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from pipeline.agents.base import RandomAgent, Teaching
from pipeline.agents.greedy import GreedyValueAgent
from pipeline.agents.monte_carlo import MonteCarloAgent, PlayerGreedyAgent
from pipeline.agents.search_agent import PlayConfig, SearchAgent, uct_agent
from pipeline.games.base import OWN_KIND, players_of
from pipeline.games.plugins import load_reference
from pipeline.nets.network_evaluator import NetworkEvaluator
from pipeline.nets.server import ServedEvaluator, ServedNetwork, served_evaluator
from pipeline.nets.shape import NetworkShape
from pipeline.search import CachingEvaluator, SearchConfig

if TYPE_CHECKING:
    from pipeline.nets.senet import SENet

# The kinds of player a spec builds for every game; the names they are recorded under in finished
# matches. Any other kind is one the game brings (`games/base.py`'s `BringsPlayers`), built by the game.
KINDS = ("alphazero", "greedy", "uct", "random", "player_greedy", "mce")


@dataclass
class AgentSpec:
    """How to build one player in any process."""

    name: str
    kind: str  # one of KINDS
    play: PlayConfig = field(default_factory=PlayConfig)
    search: SearchConfig = field(default_factory=SearchConfig)
    # (shape fields, state dict of numpy arrays: no torch needed to unpickle) for "alphazero" and "greedy"
    network: tuple[dict, dict] | None = None
    # the network exported to ONNX, where a pool's workers run it so (`for_pool`)
    graph: bytes | None = field(default=None, repr=False, compare=False)
    seed: int = 0
    epsilon: float = 0.0  # random-move probability of "greedy"
    number: int = 0  # the N of a player the game brings (`alphabeta:5`'s depth, `hold:20`'s turn total)
    teaching: bool = False  # every move recorded as a policy target (a teacher's games)
    target_temperature: float = 0.0  # mce: softmax(move means / this) as its policy target; 0: none
    _frozen: NetworkEvaluator | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self):
        self._check_kind()  # refused where it is written, not in a worker halfway through a match

    def _check_kind(self) -> None:
        if self.kind not in KINDS and not OWN_KIND.fullmatch(self.kind):
            raise ValueError(
                f"{self.name}: unknown kind of player {self.kind!r}; expected one of {', '.join(KINDS)}"
                " or a kind the game brings"
            )

    @classmethod
    def alphazero(cls, name: str, model: SENet, play: PlayConfig, search: SearchConfig) -> AgentSpec:
        return cls(name, "alphazero", play, search, _weights(model))

    @classmethod
    def uct(cls, name: str, simulations: int, c_uct: float, seed: int, seconds: float = 0.0) -> AgentSpec:
        play = PlayConfig(simulations=simulations, seconds=seconds)
        return cls(name, "uct", play, SearchConfig(c_uct=c_uct), seed=seed)

    @classmethod
    def monte_carlo(cls, name: str, playouts: int, seconds: float = 0.0) -> AgentSpec:
        return cls(name, "mce", PlayConfig(simulations=playouts, seconds=seconds))

    @classmethod
    def greedy(cls, name: str, model: SENet, epsilon: float, search: SearchConfig) -> AgentSpec:
        return cls(name, "greedy", search=search, network=_weights(model), epsilon=epsilon)

    def searches(self) -> bool:
        """Whether `build` makes a searching player (a `SearchAgent`, wrapped where it teaches): one that warms up."""
        return self.kind in ("alphazero", "uct")

    def build(self, game, stream: int = 0):
        """The agent; `stream` picks an independent random stream for agents with their own
        randomness (UCT rollouts), so each chunk of a match plays the same way in any worker."""
        agent = self._player(game, stream)
        return Teaching(agent, game.num_actions) if self.teaching else agent

    def _player(self, game, stream: int):
        self._check_kind()  # a kind changed after the spec was made
        if self.kind in ("alphazero", "greedy"):
            evaluator = CachingEvaluator(self._network(game))
            if self.kind == "greedy":
                return GreedyValueAgent(game, evaluator, self.epsilon, self.name, self.search.end_value(game))
            return SearchAgent(game, evaluator, self.search, self.play, self.name)
        if self.kind == "uct":
            seed = int(np.random.SeedSequence([self.seed, stream]).generate_state(1)[0])
            return uct_agent(game, self.play.simulations, seed, self.search.c_uct, self.name, self.play.seconds)
        if self.kind == "player_greedy":
            return PlayerGreedyAgent(game, self.name)
        if self.kind == "mce":
            return MonteCarloAgent(
                game, self.play.simulations, self.name, self.play.seconds, self.search.value, self.target_temperature
            )
        if self.kind == "random":
            return RandomAgent(game, self.name)
        return self._offered(game)

    def _offered(self, game):
        """A player the game brings, built by the factory it names; one line where it brings none."""
        offered = players_of(game)
        if self.kind not in offered:
            brings = ", ".join(offered) or "none"
            raise ValueError(f"{self.name}: {game.name} brings no {self.kind} player (its own players: {brings})")
        return load_reference(f"{game.name}'s {self.kind} player", offered[self.kind])(game, self)

    def _network(self, game) -> NetworkEvaluator | ServedEvaluator:
        """The inference server's copy where this process is a served worker (`nets/server.py`); else
        the frozen network, built once per process and shared by its chunks: freezing costs 0.3-0.8 s,
        which a stage paid again for every chunk."""
        served = served_evaluator(game, self.name)
        if served is not None:
            return served
        if self._frozen is None:
            search = self.search
            if self.graph is not None:
                self._frozen = NetworkEvaluator.of_graph(game, self.graph, NetworkShape(**self.network[0]))
            else:
                model = self._model()
                self._frozen = NetworkEvaluator(game, model, search.precision, search.runtime, search.device)
        return self._frozen

    def _model(self) -> SENet:
        from pipeline.nets.senet import SENet

        return SENet.from_weights(*self.network)

    def for_pool(self, game) -> AgentSpec:
        """This player as a pool's workers on this machine get it: where its network runs in ONNX Runtime,
        with the graph exported here once, so that no worker imports torch (1.1-1.9 s of its start) nor
        exports and checks the graph again."""
        if self.network is None or self.graph is not None:
            return self
        from pipeline.nets.network_evaluator import inference_runtime
        from pipeline.nets.onnx_runtime import cached_onnx

        search = self.search
        if inference_runtime(search.precision, search.runtime, search.device) != "onnxruntime":
            return self
        return dataclasses.replace(self, graph=cached_onnx(self._model(), game))

    def on_device(self, device: str) -> AgentSpec:
        """This player with its network on `device` (auto, cpu or cuda) instead of the params' one."""
        return dataclasses.replace(self, search=self.search.model_copy(update={"device": device}), graph=None)

    def served(self) -> ServedNetwork | None:
        """What an inference server needs to play this player's network; None for players without one."""
        if self.network is None:
            return None
        return ServedNetwork(self.name, self.network, self.search.precision, self.search.runtime)

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_frozen": None}  # neither a TorchScript module nor an ONNX session pickles


def _weights(model: SENet) -> tuple[dict, dict]:
    """The shape's fields and a copy of the weights as numpy arrays, which unpickle without torch."""
    return model.shape.to_dict(), {k: v.detach().cpu().numpy().copy() for k, v in model.state_dict().items()}
