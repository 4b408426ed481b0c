"""Players made from params, one recipe for each role an AlphaZero network plays in a run:

- the self-play player: root noise, visit-count sampling for `selfplay.temperature_moves` plies,
  tree reuse and playout caps as `selfplay` says (or greedy TD play);
- the head-to-head player, for two networks at one table (gating, evaluation's ratings, `match`
  between networks, the sweep's tuned-against-baseline games): root noise and
  `gate.temperature_moves` sampled opening plies, else two fixed networks replay one game;
- the champion: no noise, the most visited move (evaluation against baselines, `match` against a
  baseline, the sweep's panel, `play`).

All of them search with `search_config(params)`, the search settings every player of a run shares.
"""

from __future__ import annotations

from pipeline.agents.search_agent import PlayConfig
from pipeline.agents.spec import AgentSpec
from pipeline.config import Params
from pipeline.nets.senet import SENet
from pipeline.search import SearchConfig


def search_config(params: Params) -> SearchConfig:
    """The run's `search` settings as they are (its budget goes to each player's PlayConfig), with its
    value scheme and the device its networks run on."""
    settings = params.search.model_dump(exclude={"simulations"})
    return SearchConfig(**settings, value=params.value, device=params.device)


def selfplay_player(model: SENet, params: Params) -> AgentSpec:
    sp = params.selfplay
    if sp.strategy == "greedy_td":
        return AgentSpec.greedy("selfplay", model, sp.greedy_epsilon, search_config(params))
    play = PlayConfig(
        simulations=params.search.simulations,
        add_noise=True,
        temperature=sp.temperature,
        temperature_moves=sp.temperature_moves,
        temperature_after=sp.temperature_after,
        reuse_tree=sp.reuse_tree,
        full_search_fraction=sp.full_search_fraction,
        fast_simulations=min(sp.fast_simulations, params.search.simulations),
    )
    return AgentSpec.alphazero("selfplay", model, play, search_config(params))


def head_to_head_player(
    name: str, model: SENet, params: Params, simulations: int | None = None, seconds: float = 0.0
) -> AgentSpec:
    """`simulations` default: `search.simulations`; `seconds` > 0 searches by time, at most that."""
    play = PlayConfig(
        simulations=simulations or params.search.simulations,
        add_noise=True,
        temperature=1.0,
        temperature_moves=params.gate.temperature_moves,
        seconds=seconds,
    )
    return AgentSpec.alphazero(name, model, play, search_config(params))


def champion_play(simulations: int, seconds: float = 0.0) -> PlayConfig:
    """How the champion moves: no noise, no sampling, the most visited move; `seconds` > 0 searches
    by time, at most `simulations` a move."""
    return PlayConfig(simulations=simulations, seconds=seconds)


def champion_player(
    name: str, model: SENet, params: Params, simulations: int | None = None, seconds: float = 0.0
) -> AgentSpec:
    """`simulations` default: `search.simulations`."""
    play = champion_play(simulations or params.search.simulations, seconds)
    return AgentSpec.alphazero(name, model, play, search_config(params))
