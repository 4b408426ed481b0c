"""The `params.yaml` schema: defaults, validation, and one clear error line per bad field.

Every job reads its settings from here, so a misspelt key or a wrong type stops a stage before any
work is done. Reading a file is `reader.py`'s; old spellings of renamed keys are `renames.py`'s.
"""

from __future__ import annotations

import hashlib
import json
import re
import reprlib
from importlib.metadata import entry_points
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from pipeline.config.renames import current_path
from pipeline.games import make_game
from pipeline.games.base import HasMargins, PlaysGreedy, offers
from pipeline.games.values import SCHEMES
from pipeline.plumbing.clip import clip


def _not_bool(value):
    """YAML's `true` would pass as 1: a number field takes numbers only."""
    if isinstance(value, bool):
        raise ValueError(f"expected a number, got {str(value).lower()}")
    return value


# Ceilings a laptop can hold, so that a slip of the keyboard is one line, not a traceback from a node
# pool of 10^30 nodes: search budgets per move, counts of games, games searched side by side, and
# their product (one tree of about `rollouts` nodes per game side by side, hundreds of bytes a node).
MAX_SIMULATIONS = 1_000_000
MAX_GAMES = 10_000_000
MAX_SIDE_BY_SIDE = 65_536
MAX_TREE_NODES = 2**27
MAX_PARALLEL_LEAVES = 1024  # walkers a tree: each keeps a path of the move's depth (2 x 10^9 took 22 GB)
MAX_SEED = 2**63 - 1  # torch's manual_seed and numpy's generators take it
MAX_WORKERS = 4096  # processes or Ray tasks at once
MAX_MOVE_SECONDS = 3600.0  # a move searched by time: an hour; `inf` would never end the move
# The most simulations a timed move runs unless `--simulations` says otherwise; the tree's room
# (`search_agent.TIMED_TREE_BYTES`) bounds it too. It stops half of a 2-player Kingdomino network's
# 0.25 s moves early, and lifting it bought no strength there (docs/results/play-time-kingdomino2.md).
TIMED_SIMULATIONS = 1000
MAX_EPOCHS = 1000  # passes over the training data a generation; 10^12 would train for ever in silence
MAX_GENERATIONS = 10_000  # a sweep trial's generations; each costs a generation's self-play
# Weights of the residual tower: ten times KataGo's largest (b40c256, 47 M). Training holds each one four
# times (weights, gradients, Adam's two moments), every worker a copy: 2^28 of them take 4 GiB to train.
MAX_NETWORK_PARAMETERS = 2**28
Int = Annotated[int, BeforeValidator(_not_bool)]
Float = Annotated[float, BeforeValidator(_not_bool)]
Device = Literal["auto", "cpu", "cuda"]  # where networks train and infer: the params' `device`
Simulations = Annotated[int, BeforeValidator(_not_bool), Field(le=MAX_SIMULATIONS)]
Games = Annotated[int, BeforeValidator(_not_bool), Field(le=MAX_GAMES)]
SideBySide = Annotated[int, BeforeValidator(_not_bool), Field(le=MAX_SIDE_BY_SIDE)]


def _each_once(members: list[str]) -> list[str]:
    """A panel's members are players to measure against: one given twice was played once and reported twice."""
    if twice := next((m for i, m in enumerate(members) if m in members[:i]), None):
        raise ValueError(f"{twice} given twice; expected each member once")
    return members


Panel = Annotated[list[str], Field(min_length=1), AfterValidator(_each_once)]


class Section(BaseModel):
    """Unknown keys are errors, and float fields refuse .inf and .nan (no setting means infinity)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class NetworkParams(Section):
    blocks: Int = Field(4, ge=1, le=100)  # ResNet-200 has 66 bottleneck blocks; KataGo's largest, 40
    channels: Int = Field(32, ge=4, le=1024)
    se_reduction: Int = Field(4, ge=1, le=1024)

    def tower_parameters(self) -> int:
        """The weights of the residual tower (`pipeline/nets/senet.py`), the heads left out: per block two
        3x3 convolutions, two batch norms and the squeeze-and-excitation gate's two linear layers."""
        c, hidden = self.channels, max(self.channels // self.se_reduction, 1)
        return self.blocks * (2 * 9 * c * c + 2 * 2 * c + (c * hidden + hidden) + (hidden * c + c))

    @model_validator(mode="after")
    def _fits_in_memory(self) -> NetworkParams:
        if (weights := self.tower_parameters()) > MAX_NETWORK_PARAMETERS:
            raise ValueError(
                f"blocks {self.blocks} x channels {self.channels}: {weights:,} parameters, {16 * weights / 2**30:,.0f}"
                f" GiB to train (weights, gradients, Adam's moments); expected at most {MAX_NETWORK_PARAMETERS:,}"
                f" ({16 * MAX_NETWORK_PARAMETERS / 2**30:,.0f} GiB): lower blocks or channels"
            )
        return self


class ValueParams(Section):
    """What a finished game is worth to search and to the value head (pipeline/games/values.py)."""

    scheme: Literal[SCHEMES] = "win_loss"  # type: ignore[valid-type]
    zero_sum: bool = False


class SearchSettings(Section):
    """How a player searches, whatever its budget: the fields `SearchConfig` shares with the schema."""

    c_puct: Float = Field(3.0, gt=0)
    dirichlet_alpha: Float = Field(1.0, gt=0)
    dirichlet_epsilon: Float = Field(0.25, ge=0, le=1)
    max_chance_children: Int = Field(8, ge=1, description="outcomes kept per chance node (the Kingdomino notes)")
    chance_outcomes: Literal["evict", "fixed"] = Field(
        "evict",
        description="a new outcome evicts the least visited (the Kingdomino notes), or the first ones drawn are kept",
    )
    root: Literal["puct", "gumbel"] = Field("puct", description="root search: PUCT or Gumbel AlphaZero (issue 14)")
    gumbel_considered: Int = Field(16, ge=1, description="gumbel: actions sampled at the root, capped by legal moves")
    gumbel_c_scale: Float = Field(0.1, gt=0, description="gumbel: scale of the completed Q in the improved policy")
    forced_playouts: Float = Field(0.0, ge=0, description="KataGo's k: forced playouts and target pruning; 0 = off")
    precision: Literal["float32", "bfloat16", "int8"] = Field("float32", description="the network arithmetic of search")
    runtime: Literal["auto", "torch", "onnxruntime"] = Field(
        "auto",
        description="what runs the network: auto takes ONNX Runtime for float32 on the CPU, torch elsewhere",
        repr=False,  # out of match caches' keys: the runtimes' answers agree to 1e-6, the games up to rounding
    )
    greedy_playout_weight: Float = Field(
        0.0, ge=0, le=1, description="leaf value (1 - w) network + w a player-greedy playout's outcome; 0 = off"
    )
    greedy_playouts: Int = Field(
        1, ge=1, le=1024, description="greedy playouts a leaf averages when greedy_playout_weight > 0"
    )
    fpu_reduction: Float = Field(
        0.0,
        ge=0,
        le=2,
        description="first-play urgency (Lc0): an unvisited child's value is the parent's mean less this times"
        " the square root of the visited children's prior mass; 0 = the parent's mean",
        repr=False,  # in a match's identity only when set (evaluation's spec_identity): older runs keep their games
    )
    parallel_leaves: Int = Field(
        1,
        ge=1,
        le=MAX_PARALLEL_LEAVES,
        description="walkers a tree sends per evaluator call, under a virtual loss; 1 = one leaf at a time",
    )

    @model_validator(mode="after")
    def _gumbel_walks_alone(self) -> SearchSettings:
        if self.parallel_leaves > 1 and self.root == "gumbel":
            raise ValueError("parallel_leaves: Gumbel's root names every simulation's action; set 1 or root puct")
        return self


class SearchParams(SearchSettings):
    """The `search` section: the settings, and the run's budget a move."""

    simulations: Simulations = Field(50, ge=1)


class SelfPlayParams(Section):
    strategy: Literal["alphazero", "greedy_td"] = "alphazero"
    games: Games = Field(300, ge=1)
    parallel_games: SideBySide = Field(64, ge=1)
    temperature: Float = Field(1.0, ge=0)
    temperature_moves: Int = Field(6, ge=0)
    temperature_after: Float = Field(
        0.0, ge=0, description="temperature of the plies after temperature_moves; 0 = the most visited move"
    )
    reuse_tree: bool = True
    random_opening_plies: Int = Field(
        0, ge=0, description="each game starts after 0..N (uniformly drawn) uniformly random moves, not trained on"
    )
    full_search_fraction: Float = Field(1.0, ge=0, le=1, description="playout cap randomization")
    fast_simulations: Simulations = Field(10, ge=1, description="budget of the moves that miss the full search")
    greedy_epsilon: Float = Field(0.2, ge=0, le=1)
    td_gamma: Float = Field(0.9, ge=0, le=1)
    td_lambda: Float = Field(0.9, ge=0, le=1)
    root_value_weight: Float = Field(
        0.0, ge=0, le=1, description="alphazero value target (1 - w) outcome + w search root value"
    )
    playout_value_weight: Float = Field(
        0.0, ge=0, le=1, description="value target (1 - u) the strategy's + u the mean of greedy playouts; 0 = off"
    )
    playout_value_playouts: Int = Field(
        16, ge=1, le=1024, description="greedy playouts from each position when playout_value_weight > 0"
    )
    opponent: str | None = Field(
        None,
        description="null: every seat plays itself; a baseline of the player grammar (uct:25, random, greedy) "
        "that takes opponent_seats seats in a share opponent_share of the games, its moves not trained on",
    )
    opponent_share: Float = Field(0.0, ge=0, le=1, description="share of the games with opponent seats")
    opponent_seats: Int = Field(1, ge=1, description="seats the opponent takes in such a game; fewer than the players")

    @model_validator(mode="after")
    def _root_value_needs_search(self) -> SelfPlayParams:
        if self.root_value_weight > 0 and self.strategy != "alphazero":
            raise ValueError("root_value_weight: must be 0 with strategy greedy_td (no search, TD(lambda) targets)")
        return self


class TrainParams(Section):
    batch_size: Int = Field(64, ge=1, le=MAX_SIDE_BY_SIDE)
    learning_rate: Float = Field(1e-3, gt=0)
    lr_schedule: Literal["constant", "cosine"] = "constant"
    weight_decay: Float = Field(1e-4, ge=0)
    epochs: Int = Field(4, ge=1, le=MAX_EPOCHS, description="passes over the replay window a generation")
    replay_window: Int = Field(4, ge=1, description="generations of self-play data kept for training")
    replay_window_growth: Int = Field(
        0, ge=0, description="0: the window is `replay_window` from the start; N: 1 generation, one more every N"
    )
    augment: bool | Literal["random"] = Field(
        True,
        description="true: every sample under every board symmetry each epoch; random: each sample once an"
        " epoch under a symmetry drawn for it (AlphaGo Zero's: a symmetry count's less training); false: as played",
    )
    merge_positions: bool = Field(False, description="train on one sample per distinct position, log-weighted")
    score_weight: Float = Field(
        0.0,
        ge=0,
        le=10,
        description="weight of an auxiliary loss on each seat's final points (KataGo's score target): the"
        " network grows a score head for games with margins; search never reads it. 0: no score head",
    )

    @field_validator("augment", mode="before")
    @classmethod
    def _augment_choice(cls, value):
        if value not in (True, False, "random") or type(value) not in (bool, str):
            raise ValueError(f"expected true, false or random, got {clip(repr(value), 60)}")
        return value


class GateParams(Section):
    games_per_seating: Games = Field(12, ge=1)
    threshold: Float = Field(0.55, ge=0, le=1)
    temperature_moves: Int = Field(2, ge=0)


class Fig3Params(Section):
    """Petosa & Balch fig. 3a/3b: the champion and a control UCT against UCT opponents, every seat permutation."""

    enabled: bool = True
    opponent_rollouts: list[Simulations] = Field(default_factory=lambda: [25, 50, 100, 200, 400], min_length=1)
    games_per_seating: Games = Field(20, ge=1)


class RatingsParams(Section):
    """Bradley-Terry ratings of every generation's best network and baselines; the matches against the
    first network give the Connect-4 bot post's win / draw / loss curves."""

    enabled: bool = True
    games_per_seating: Games = Field(4, ge=1)
    previous: Int = Field(2, ge=0, description="each network also plays this many networks before it")
    uct_baselines: list[Simulations] = Field(default_factory=lambda: [50, 200], description="UCT rollout budgets")
    baselines: list[str] = Field(
        default_factory=list, description="more baselines, named in the player grammar: greedy, mce:50, uct:0.5s"
    )


def describe_error(error: dict) -> str:
    """One of pydantic's errors as the one line a user reads: the dotted field, then what was expected."""
    where = ".".join(str(p) for p in error["loc"]) or "(top level)"
    kind = error["type"]
    if kind == "extra_forbidden":
        return f"{where}: unknown key (misspelt?)"
    if kind == "missing":
        return f"{where}: required key is missing"
    if kind == "value_error":  # our validators' own one-line reasons; whole-file ones name their field
        reason = str(error["ctx"]["error"])
        said = not error["loc"] or reason.startswith(
            (f"{where} ", f"{where}.")
        )  # "game 'x': ..." names its field already
        return reason if said else f"{where}: {reason}"
    if kind == "literal_error":
        return f"{where}: unknown value {_quoted(error['input'])}; expected {error['ctx']['expected']}"
    return f"{where}: {error['msg']} (got {_quoted(error['input'])})"


_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxlist, _SHORT.maxdict, _SHORT.maxstring, _SHORT.maxother = 2, 4, 4, 60, 60


def _quoted(value) -> str:
    """The value a user gave, cut before it is written out: `repr` of a nest of YAML aliases would
    expand it whole (billions of items) only to print 60 characters of it."""
    return clip(_SHORT.repr(value), 60)


SECTION_GROUP = "alphazero_pipeline.sections"  # a game's own experiments' sections of `evaluate`


def game_sections() -> dict[str, type[Section]]:
    """The sections of `evaluate` that installed games bring for their own experiments (the project's:
    Connect-4's `alphabeta`, `solver_games`, `benchmark`, Pig's `pig_oracle`), by name: entry points of
    `SECTION_GROUP`, `name = "module.path:Class"`, each a `Section`."""
    sections = {}
    for point in entry_points(group=SECTION_GROUP):
        section = point.load()
        if not (isinstance(section, type) and issubclass(section, Section)):
            raise ValueError(f"evaluate.{point.name}: {point.value} is not a params Section (config/schema.py)")
        sections[point.name] = section
    return sections


class EvaluateParams(Section):
    """The experiments every game has (`fig3`, `ratings`), and a section for each one a game brings
    (`game_sections`), filled with its defaults where the file has none, as the library's own are."""

    model_config = ConfigDict(extra="allow")
    c_uct: Float = Field(1.41, gt=0, description="exploration constant of every UCT opponent")
    parallel_games: SideBySide = Field(64, ge=1)
    fig3: Fig3Params = Fig3Params()
    ratings: RatingsParams = RatingsParams()

    @model_validator(mode="after")
    def _game_sections(self):
        given, sections = self.__pydantic_extra__, game_sections()
        if unknown := [name for name in given if name not in sections]:
            raise ValueError(f"evaluate.{unknown[0]}: unknown key (misspelt?)")
        for name, section in sections.items():
            try:
                given[name] = section.model_validate(given.get(name, {}))
            except ValidationError as err:
                error = err.errors()[0]
                raise ValueError(describe_error({**error, "loc": ("evaluate", name, *error["loc"])})) from None
        return self


class TrackingParams(Section):
    tracking_uri: str | None = Field(None, description="None: sqlite:///<project root>/mlflow.db")
    experiment: str = "alphazero"
    model_name: str = "alphazero-champion"


class SweepDimension(Section):
    """One tuned param: a range (`low`..`high`, log-uniform with `log`) or a list of `choices`."""

    low: Float | None = None
    high: Float | None = None
    log: bool = False
    choices: list[float | int | str | bool] | None = None

    @model_validator(mode="after")
    def _range_or_choices(self) -> SweepDimension:
        if self.choices is None and (self.low is None or self.high is None or self.low > self.high):
            raise ValueError("give low <= high, or choices")
        if self.choices is not None and not self.choices:
            raise ValueError("choices must not be empty")
        if self.log and self.choices is None and self.low <= 0:
            raise ValueError(f"log: a log-uniform range needs low > 0, got {self.low:g}")
        return self


def _default_space() -> dict[str, SweepDimension]:
    return {
        "search.c_puct": SweepDimension(low=0.5, high=8.0, log=True),
        "search.dirichlet_alpha": SweepDimension(low=0.05, high=2.0, log=True),
        "search.simulations": SweepDimension(low=10, high=200, log=True),
    }


class ConfirmParams(Section):
    """`sweep --confirm`: the top settings and the baseline trained again from fresh seeds and played
    head to head (`pipeline/sweeps/confirmation.py`)."""

    top: Int = Field(3, ge=1, description="best complete trials of distinct params confirmed against the baseline")
    seeds: Int = Field(3, ge=1, le=1000, description="fresh training seeds per setting")
    games_per_seating: Games = Field(4, ge=1, description="games per seating of each pair of networks")
    ablate: bool = Field(
        False, description="also the best setting with each tuned param put back to the baseline's: which carries it"
    )


PLAY_SHIPPED = "shipped"  # a play-time panel's member: the same network searching as its params say
# Search settings of self-play's and head-to-head games' root noise only: a champion plays without noise, so
# tuning them at play time would only tune how much one side of a head-to-head game is shaken.
ROOT_NOISE = ("dirichlet_alpha", "dirichlet_epsilon")


def _default_play_space() -> dict[str, SweepDimension]:
    return {
        "search.c_puct": SweepDimension(low=0.5, high=8.0, log=True),
        "search.fpu_reduction": SweepDimension(low=0.0, high=1.0),
    }


class PlayConfirmParams(Section):
    """`sweep --play N --confirm`: the top settings and the shipped one played again on fresh seeds."""

    top: Int = Field(3, ge=1, description="best complete trials of distinct settings confirmed")
    games: Games = Field(
        400, ge=1, description="games of each confirmed setting against each panel member (and the shipped one)"
    )


class PlaySweepParams(Section):
    """`python -m pipeline sweep --play NETWORK`: an Optuna study of how one fixed network searches at play
    time (`pipeline/sweeps/play.py`): every trial a setting of `search.*`, at `move_time` seconds a move
    (or `simulations` a move), alone against each `panel` member over every seat order, on the same games."""

    study: str | None = Field(None, description="None: <network>-play")
    trials: Int = Field(24, ge=1, description="finished trials (complete or pruned) the study aims at")
    move_time: Float = Field(0.0, ge=0, le=MAX_MOVE_SECONDS, description="seconds a move; 0 = simulations a move")
    simulations: Simulations = Field(50, ge=1, description="the networks' budget a move (a cap under move_time)")
    panel: Panel = Field(default_factory=lambda: [PLAY_SHIPPED])
    min_games: Games = Field(20, ge=1, description="games against each panel member before the pruner first looks")
    max_games: Games = Field(80, ge=1, description="games against each panel member of a trial played to the end")
    reduction_factor: Int = Field(2, ge=2, le=16, description="successive halving: rungs at min_games x this^k")
    opening_plies: Int = Field(
        0, ge=0, description="each round of seat orders starts after 0..N random moves, the same for every order"
    )
    space: dict[str, SweepDimension] = Field(default_factory=_default_play_space, min_length=1)
    confirm: PlayConfirmParams = PlayConfirmParams()

    @field_validator("space")
    @classmethod
    def _search_settings_only(cls, space: dict[str, SweepDimension]) -> dict[str, SweepDimension]:
        settings = sorted(SearchSettings.model_fields)
        for path in space:
            section, _, name = current_path(path).partition(".")
            if section != "search":
                raise ValueError(
                    f"{path!r} is not a search setting; a play-time sweep varies how a trained network"
                    f" searches (search.c_puct, ...), a training sweep (sweep.space) how it is trained"
                )
            if name == "simulations":
                raise ValueError("'search.simulations' is the budget; set sweep.play.move_time or simulations")
            if name in ROOT_NOISE:
                raise ValueError(
                    f"{path!r} is root noise, which a champion does not play with: the sweep's games against"
                    " the shipped setting give both sides the shipped noise, so leave it out of the space"
                )
            if name not in settings:
                raise ValueError(f"{path!r}: no such search setting; expected one of {', '.join(settings)}")
        return space

    @model_validator(mode="after")
    def _games_grow(self) -> PlaySweepParams:
        if self.max_games < self.min_games:
            raise ValueError(f"max_games: {self.max_games} is below min_games {self.min_games}")
        return self

    def rungs(self) -> list[int]:
        """Games against each panel member after each rung: min_games x factor^k, up to max_games."""
        games = [self.min_games]
        while games[-1] * self.reduction_factor < self.max_games:
            games.append(games[-1] * self.reduction_factor)
        return games + [self.max_games] if games[-1] < self.max_games else games


def _default_population_space() -> dict[str, SweepDimension]:
    return {
        "search.c_puct": SweepDimension(low=0.5, high=8.0, log=True),
        "search.dirichlet_alpha": SweepDimension(low=0.05, high=2.0, log=True),
        "train.learning_rate": SweepDimension(low=0.0003, high=0.003, log=True),
        "selfplay.root_value_weight": SweepDimension(low=0.0, high=0.75),
    }


# What a member may change between generations: how it searches, plays itself and trains. Its network's
# shape, the game, the value scheme of the samples already in its window and where it runs may not.
POPULATION_SECTIONS = ("search", "selfplay", "train")


class PopulationParams(Section):
    """`python -m pipeline sweep --population`: population-based training (Jaderberg et al. 2017; Wu, Wei
    & Wu 2020) on Ray Tune (`pipeline/sweeps/population.py`). `members` runs of generations side by side;
    every `interval` generations each plays `panel` and the bottom `quantile` copy a top member's
    checkpoint and perturb (or, with `resample`, redraw) its settings within `space`."""

    study: str | None = Field(None, description="None: <game>-population")
    members: Int = Field(4, ge=2, le=MAX_WORKERS, description="runs trained side by side")
    generations: Int = Field(12, ge=1, le=MAX_GENERATIONS, description="generations of every member")
    interval: Int = Field(2, ge=1, description="generations between measurements (and exploits)")
    panel: Panel = Field(default_factory=lambda: ["uct:25", "uct:200"])
    fitness: Literal["mean", "min"] = Field(
        "mean", description="of the panel's pairwise scores: mean, or min (the weakest match decides)"
    )
    games_per_seating: Games = Field(4, ge=1, description="games per seat arrangement against each panel member")
    eval_simulations: Simulations = Field(50, ge=1, description="a member's search budget against the panel")
    quantile: Float = Field(0.25, gt=0, le=0.5, description="share of members that copy (bottom) and are copied (top)")
    resample: Float = Field(0.25, ge=0, le=1, description="chance that explore redraws a setting, not perturbs it")
    max_failures: Int = Field(3, ge=0, le=100, description="restarts of a dead member from its checkpoint")
    space: dict[str, SweepDimension] = Field(default_factory=_default_population_space, min_length=1)

    @field_validator("space")
    @classmethod
    def _changes_between_generations(cls, space: dict[str, SweepDimension]) -> dict[str, SweepDimension]:
        for path in space:
            section = current_path(path).partition(".")[0]
            if section not in POPULATION_SECTIONS:
                raise ValueError(
                    f"{path!r} cannot change between generations (a member keeps its network, game and value"
                    f" scheme); a population varies {', '.join(s + '.*' for s in POPULATION_SECTIONS)}"
                )
            if current_path(path) == "selfplay.games":
                raise ValueError("'selfplay.games' follows search.simulations (equal cost a generation); tune that")
        return space

    @model_validator(mode="after")
    def _whole_intervals(self) -> PopulationParams:
        if self.generations % self.interval:
            raise ValueError(f"generations: {self.generations} is not a multiple of interval {self.interval}")
        return self


class SweepParams(Section):
    """`python -m pipeline sweep`: an Optuna study over `space` (dotted params paths)."""

    study: str | None = Field(None, description="None: <game>-search (`Params.sweep_study`)")
    storage: str | None = Field(None, description="None: sqlite:///<project root>/sweep.db")
    trials: Int = Field(30, ge=1, description="finished trials (complete or pruned) the study aims at")
    objective: Literal["strength", "strength_and_compute"] = "strength"
    pruner: Literal["median", "hyperband", "none"] = "median"
    generations: Int = Field(
        3, ge=1, le=MAX_GENERATIONS, description="generations per trial, each with the base params' self-play cost"
    )
    simulations_per_generation: Int | None = Field(
        None,
        ge=1,
        description="self-play simulations a generation of every trial spends, its games following its game "
        "length; null: the base params' games rescaled by simulations a move (equal only at equal game lengths)",
    )
    panel: Panel = Field(default_factory=lambda: ["uct:25", "uct:100", "uct:400"])
    games_per_seating: Games = Field(4, ge=1, description="games per seat arrangement against each panel member")
    eval_simulations: Simulations = Field(
        50, ge=1, description="search budget of the trained network against the panel"
    )
    space: dict[str, SweepDimension] = Field(default_factory=_default_space, min_length=1)
    confirm: ConfirmParams = ConfirmParams()
    play: PlaySweepParams = Field(default_factory=PlaySweepParams)
    population: PopulationParams = Field(default_factory=PopulationParams)


class TeacherParams(Section):
    """Generation 0 taught by a player that needs no network: it plays itself, and the network learns its
    moves (policy) and the games' outcomes (value) before self-play begins (`pipeline/jobs/teacher.py`)."""

    player: str | None = Field(
        None, description="null: no teacher; a baseline of the player grammar: greedy, mce:50, uct:200, alphabeta:4"
    )
    games: Games = Field(2000, ge=1, description="the teacher's games against itself")
    epochs: Int = Field(4, ge=1, le=MAX_EPOCHS, description="passes over them (train's other settings)")
    temperature: Float = Field(
        0.0,
        ge=0,
        description="0: the teacher's moves, one-hot, as policy targets; > 0 (mce only; expert iteration): "
        "softmax(each move's mean value / this), what it learnt of every move",
    )
    value_weight: Float = Field(
        0.0,
        ge=0,
        le=1,
        description="value target (1 - w) outcome + w the teacher's mean value of its move (mce with a "
        "temperature only), as selfplay.root_value_weight does with a search's",
    )


class BackendParams(Section):
    """Where matches are played: processes on this machine, or tasks on a Ray cluster. Either plays
    the same games for the same `workers`, so neither setting re-runs a stage."""

    kind: Literal["pool", "ray"] = Field("pool", description="pool: processes here | ray: Ray tasks")
    ray_address: str | None = Field(None, description="null: a local Ray started on demand; auto; ray://host:port")
    inference_server: Literal["auto", "on", "off"] = Field(
        "auto",
        description="one process evaluates every worker's network calls (pipeline/nets/server.py); "
        "auto: where the network runs on a GPU",
    )


class Generation(Section):
    gen: Int = Field(ge=1)
    prev: Int = Field(ge=0)


# Params that say where a run is placed and how it is logged, and the sweep command's own section: what
# a pipeline run's outputs do not depend on. No DVC stage declares them (tests/test_dvc_deps.py).
NOT_SETTING = ("threads", "device", "backend", "tracking", "sweep")


class Params(Section):
    game: str = Field(
        description="a game spec: a registered game's name with integer options, NAME(players=3), a plugin's"
        " module:Class, or openspiel:NAME"
    )
    seed: Int = Field(0, ge=0, le=MAX_SEED)
    threads: Int = Field(0, ge=0, description="torch threads of single-process stages; 0 = follow the free cores")
    workers: Int = Field(
        0, ge=0, le=MAX_WORKERS, description="chunks of games in flight; 0 = one per core (of the Ray cluster)"
    )
    backend: BackendParams = BackendParams()
    device: Device = Field("auto", description="where networks train and infer")
    warm_start: str | None = Field(
        None, description="generation 0 from a shipped champion's name or a checkpoint file; None = random"
    )
    teacher: TeacherParams = TeacherParams()
    network: NetworkParams = NetworkParams()
    value: ValueParams = ValueParams()
    search: SearchParams = SearchParams()
    selfplay: SelfPlayParams = SelfPlayParams()
    train: TrainParams = TrainParams()
    gate: GateParams = GateParams()
    evaluate: EvaluateParams = Field(default_factory=EvaluateParams)  # at validation: it loads the games' sections
    tracking: TrackingParams = TrackingParams()
    sweep: SweepParams = SweepParams()
    generations: list[Generation] = Field(min_length=1)

    @field_validator("generations")
    @classmethod
    def _chained(cls, generations: list[Generation]) -> list[Generation]:
        for i, item in enumerate(generations):
            if item.gen != i + 1 or item.prev != i:
                raise ValueError(f"item {i} must be {{gen: {i + 1}, prev: {i}}} (generations chain from 1)")
        return generations

    @field_validator("game")
    @classmethod
    def _known_game(cls, spec: str) -> str:
        make_game(spec)  # raises ValueError with the reason
        return spec

    @model_validator(mode="after")
    def _space_names_numeric_params(self) -> Params:
        spaces = {"sweep.space": self.sweep.space, "sweep.play.space": self.sweep.play.space}
        spaces["sweep.population.space"] = self.sweep.population.space
        for field, space in spaces.items():
            for path, dimension in space.items():
                section, _, name = path.partition(".")
                value = getattr(getattr(self, section, None), name, None) if name else None
                if not isinstance(value, bool | int | float | str):
                    raise ValueError(f"{field}: {path!r} names no single param (expected section.field)")
                if dimension.choices is None and (isinstance(value, bool) or not isinstance(value, int | float)):
                    raise ValueError(f"{field}: {path!r} takes choices, not a range")
        if self.sweep.simulations_per_generation and "selfplay.games" in self.sweep.space:
            raise ValueError("sweep.space: 'selfplay.games' is set by sweep.simulations_per_generation; tune one")
        return self

    @model_validator(mode="after")
    def _one_start(self) -> Params:
        if self.teacher.player is not None and self.warm_start is not None:
            raise ValueError("teacher.player: generation 0 is taught or warm-started, not both; set one to null")
        return self

    @model_validator(mode="after")
    def _trees_fit_in_memory(self) -> Params:
        nodes = self.search.simulations * self.selfplay.parallel_games
        if nodes > MAX_TREE_NODES:
            raise ValueError(
                f"search.simulations x selfplay.parallel_games: {nodes:,} tree nodes in one worker exceed "
                f"{MAX_TREE_NODES:,}, more than a machine's memory holds; lower one of them"
            )
        return self

    @model_validator(mode="after")
    def _margin_needs_a_margin(self) -> Params:
        if self.value.scheme == "margin" and not offers(make_game(self.game), HasMargins):
            raise ValueError(f"value.scheme: game {self.game!r} defines no margin; use win_loss or pairwise_rank")
        if self.train.score_weight > 0 and not offers(make_game(self.game), HasMargins):
            raise ValueError(f"train.score_weight: game {self.game!r} defines no points (margins) to predict; use 0")
        return self

    @model_validator(mode="after")
    def _playouts_need_a_greedy_player(self) -> Params:
        weights = {
            "search.greedy_playout_weight": self.search.greedy_playout_weight,
            "selfplay.playout_value_weight": self.selfplay.playout_value_weight,
        }
        for setting, weight in weights.items():
            if weight > 0 and not offers(make_game(self.game), PlaysGreedy):
                raise ValueError(f"{setting}: game {self.game!r} has no player-greedy policy to play out with; set 0")
        return self

    @property
    def final_generation(self) -> int:
        return self.generations[-1].gen

    def setting(self) -> dict:
        """Every param a pipeline run's outputs depend on: all but `NOT_SETTING`, and `generations` as
        the number it chains to. One setting is one MLflow run (`pipeline/harness/tracking.py`)."""
        data = self.model_dump(exclude=set(NOT_SETTING))
        return {**data, "generations": len(data["generations"])}

    def sweep_study(self) -> str:
        """The training sweep's study name: `sweep.study`, else the game's, `connect4-search`."""
        return self.sweep.study or f"{self.game_slug()}-search"

    def population_study(self) -> str:
        """The population's name: `sweep.population.study`, else the game's, `connect3x3-population`."""
        return self.sweep.population.study or f"{self.game_slug()}-population"

    def game_slug(self) -> str:
        return re.sub(r"[^0-9A-Za-z]+", "_", self.game).strip("_")

    def section_hash(self, *names: str) -> str:
        """Short hash of the named sections, recorded in checkpoints for provenance."""
        data = {name: _dump(getattr(self, name)) for name in names}
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:12]


def dotted(data: dict, prefix: str = "") -> dict:
    """Nested params as one mapping of dotted keys (`search.c_puct`) to their values: how MLflow and the
    report list them."""
    flat = {}
    for key, value in data.items():
        if isinstance(value, dict):
            flat.update(dotted(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _dump(value):
    return value.model_dump() if isinstance(value, BaseModel) else value
