"""A sweep's settings as params: a dotted path's value, settings put into params and validated as
params.yaml is, and a space and a panel checked whole before any trial or member runs.

Light on purpose (no torch, Optuna or Ray): `sweep` checks a bad space or panel with this module alone,
one line in about a second, where the study's imports took seconds more."""

from __future__ import annotations

from typing import Any

from pipeline.agents.names import BASELINES, PlayerName, parse_player, refuse_not_brought
from pipeline.config import ConfigError, Params, current_path, parse_params
from pipeline.games import make_game

POPULATION_PANEL = "sweep.population.panel"


def param_value(params: Params, path: str) -> Any:
    section, name = path.split(".", 1)
    return getattr(getattr(params, section), name)


def with_overrides(params: Params, values: dict[str, Any]) -> Params:
    """The params with dotted paths replaced, validated like params.yaml itself."""
    data = params.model_dump()
    for path, value in values.items():
        *sections, name = current_path(path).split(".")
        target = data
        for section in sections:
            target = target[section]
        target[name] = value
    return parse_params(data, "sweep trial params")


def is_integer(params: Params, path: str) -> bool:
    """Whether the param at `path` takes integers (a bool is not one)."""
    value = param_value(params, path)
    return isinstance(value, int) and not isinstance(value, bool)


def trial_params(base: Params, values: dict[str, Any], seed: int | None = None) -> Params:
    """The trial's params; self-play games rescaled so a generation costs what the base params' does;
    `seed` in place of the base's where given (a confirmation unit's training seed)."""
    params = with_overrides(base, values)
    if "selfplay.games" not in values:
        games = max(1, round(base.selfplay.games * base.search.simulations / params.search.simulations))
        params = with_overrides(params, {"selfplay.games": games})
    return params if seed is None else with_overrides(params, {"seed": seed})


def check_space(params: Params, space: dict, field: str, build=None) -> None:
    """Every bound and choice of `space` as the params' own schema takes it (`build(params, values)`
    makes a trial's params: default `trial_params`), one line naming `field` and the value if not, before
    any trial runs: found after the baseline's trial, a bad bound cost its minutes and a traceback."""
    build = build or trial_params
    for path, dim in space.items():
        values = dim.choices if dim.choices is not None else [dim.low, dim.high]
        for value in values:
            value = round(value) if is_integer(params, path) and dim.choices is None else value
            try:
                build(params, {current_path(path): value})
            except ConfigError as err:
                reason = str(err).rsplit(": ", 1)[-1]
                shown = f"{value:g}" if isinstance(value, float) else repr(value)
                raise ConfigError(f"{field}: {path!r} = {shown} is not a valid value: {reason}") from None


def panel_players(
    params: Params, panel: list[str] | None = None, field: str = "sweep.panel", passes: tuple[str, ...] = ()
) -> list[PlayerName]:
    """The reference players `panel` names (default: `sweep.panel`), less the entries in `passes` (a
    play-time panel's `shipped`); a name the grammar does not know, or a kind the game does not bring, is
    one line naming `field` and the entry."""
    players, game = [], make_game(params.game)
    for i, text in enumerate(params.sweep.panel if panel is None else panel):
        if text in passes:
            continue
        try:
            player = parse_player(text, BASELINES)
            refuse_not_brought(player, game)
        except ValueError as err:
            raise ConfigError(f"{field}[{i}]: {err}") from None
        players.append(player)
    return players


def check_population(params: Params) -> None:
    """Everything a population's member would refuse, refused before Ray starts: a bound or choice of
    `sweep.population.space` the params' own schema rejects, a panel player the game does not know."""
    check_space(params, params.sweep.population.space, "sweep.population.space")
    panel_players(params, params.sweep.population.panel, POPULATION_PANEL)
