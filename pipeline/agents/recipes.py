"""Players made from params: the search settings every AlphaZero player of a run shares (self-play,
gating, evaluation, matches and sweeps alike)."""

from __future__ import annotations

from pipeline.config import Params
from pipeline.search import SearchConfig


def search_config(params: Params) -> SearchConfig:
    s, v = params.search, params.value
    return SearchConfig(
        c_puct=s.c_puct,
        dirichlet_alpha=s.dirichlet_alpha,
        dirichlet_epsilon=s.dirichlet_epsilon,
        value_scheme=v.scheme,
        zero_sum=v.zero_sum,
        max_chance_children=s.max_chance_children,
        root=s.root,
        gumbel_considered=s.gumbel_considered,
        gumbel_c_scale=s.gumbel_c_scale,
        forced_playouts=s.forced_playouts,
        precision=s.precision,
    )
