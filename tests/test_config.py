"""params.yaml validation: one line naming the field and what was expected."""

import os

import pytest
import yaml
from shipped import ROOT, shipped_params

from pipeline.config import MAX_YAML_BYTES, ConfigError, load_params, parse_params

BASE = {"game": "tictacmo", "generations": [{"gen": 1, "prev": 0}]}


def with_(**changes):
    return {**BASE, **changes}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (with_(game="chess"), "game: unknown game 'chess'; expected one of connect3x3, connect4, kingdomino"),
        (with_(game="pig(players=3,gaol=20)"), "game 'pig.*unknown option 'gaol'; pig takes options players, goal"),
        (with_(game="pig(players=9)"), "game: pig: players must be 2 to 6, got 9"),
        (with_(game="tictacmo(size=4)"), "game 'tictacmo.*tictacmo takes no options"),
        (with_(serch={"c_puct": 1}), "serch: unknown key"),
        (with_(search={"c_puct": "high"}), "search.c_puct: .*valid number"),
        (with_(search={"simulations": 0}), "search.simulations: .*greater than or equal to 1"),
        (
            with_(search={"simulations": 10**30}),
            r"search.simulations: .*less than or equal to 1000000 \(got 1000000000",
        ),
        (with_(selfplay={"games": 10**12}), "selfplay.games: .*less than or equal to 10000000"),
        (with_(evaluate={"ratings": {"uct_baselines": [50, 10**9]}}), "evaluate.ratings.uct_baselines.1: .*less than"),
        (
            with_(search={"simulations": 100_000}, selfplay={"parallel_games": 4096}),
            "search.simulations x selfplay.parallel_games: 409,600,000 tree nodes in one worker exceed",
        ),
        (with_(train={"epochs": 2, "lr": 0.1}), "train.lr: unknown key"),
        (with_(train={"augment": "sometimes"}), "train.augment: expected true, false or random, got 'sometimes'"),
        (with_(generations=[{"gen": 1, "prev": 0}, {"gen": 3, "prev": 2}]), "generations: .*item 1 must be"),
        ({"generations": BASE["generations"]}, "game: required key is missing"),
        (with_(selfplay=yaml.safe_load("games: true")), "selfplay.games: expected a number, got true"),
        (with_(search={"c_puct": False}), "search.c_puct: expected a number, got false"),
        (with_(evaluate={"fig3": {"opponent_rollouts": [25, True]}}), "evaluate.fig3.opponent_rollouts.1: expected a"),
        (with_(generations=[{"gen": True, "prev": 0}]), "generations.0.gen: expected a number"),
        (with_(search=yaml.safe_load("c_puct: .inf")), r"search.c_puct: .*finite number \(got inf\)"),
        (with_(train=yaml.safe_load("learning_rate: .nan")), r"train.learning_rate: .*finite number"),
        (with_(sweep={"space": {"search.c_puct": {"low": 0.5, "high": float("inf")}}}), "sweep.space.*finite"),
        (with_(search={"c_puct": "x" * 1_000_000}), r"search.c_puct: .*\(got 'x{20,30}\.\.\.x{20,30}'\)$"),
        (with_(search={"greedy_playout_weight": 1.5}), "search.greedy_playout_weight: .*less than or equal to 1"),
        (with_(search={"greedy_playouts": 0}), "search.greedy_playouts: .*greater than or equal to 1"),
        (with_(network={"blocks": 10**8}), "network.blocks: .*less than or equal to 100"),
        (with_(network={"channels": 10**9}), "network.channels: .*less than or equal to 1024"),
        (with_(search={"parallel_leaves": 2 * 10**9}), "search.parallel_leaves: .*less than or equal to 1024"),
        (with_(sweep={"play": {"panel": ["shipped", "shipped"]}}), "sweep.play.panel: shipped given twice"),
        (
            with_(network={"blocks": 100, "channels": 1024}),
            r"network: blocks 100 x channels 1024: 1,940,403,200 parameters, 29 GiB to train .*expected at most",
        ),
        (with_(train={"epochs": 1e12}), r"train.epochs: .*less than or equal to 1000 \(got 1000000000000.0\)"),
        (with_(teacher={"epochs": 1e12}), "teacher.epochs: .*less than or equal to 1000"),
        (with_(sweep={"generations": 1e12}), "sweep.generations: .*less than or equal to 10000"),
        (with_(game="pig(players=\u0663)"), r"game 'pig.*option 'players=\u0663' must be name=integer"),  # an Arabic 3
        (with_(train={"batch_size": 10**13}), "train.batch_size: .*less than or equal to 65536"),
        (with_(workers=10**8), "workers: .*less than or equal to 4096"),
        (with_(seed=-1), "seed: .*greater than or equal to 0"),
        (with_(seed=10**27), "seed: .*less than or equal to 9223372036854775807"),
        (
            with_(search={"greedy_playout_weight": 0.5}),
            "search.greedy_playout_weight: game 'tictacmo' has no player-greedy policy to play out with; set 0",
        ),
    ],
)
def test_bad_params_name_the_field(data, message):
    with pytest.raises(ConfigError, match=message) as info:
        parse_params(data)
    assert "\n" not in str(info.value)


def test_a_key_left_out_means_the_shipped_value_in_the_schema_and_in_search():
    """One source of defaults: the schema. The shipped params.yaml writes each of them out, and the
    search's own settings start from them."""
    from pipeline.search.mcts import SearchConfig

    shipped = parse_params(shipped_params())
    assert shipped == parse_params({"game": shipped.game, "generations": shipped.model_dump()["generations"]})
    search = SearchConfig()
    assert (search.c_puct, search.dirichlet_alpha, search.dirichlet_epsilon, search.root, search.precision) == (
        shipped.search.c_puct,
        shipped.search.dirichlet_alpha,
        shipped.search.dirichlet_epsilon,
        shipped.search.root,
        shipped.search.precision,
    )
    assert (search.c_uct, search.value.scheme, search.max_chance_children, search.greedy_playout_weight) == (
        shipped.evaluate.c_uct,
        shipped.value.scheme,
        shipped.search.max_chance_children,
        shipped.search.greedy_playout_weight,
    )


def test_defaults_follow_seed_000_table_1():
    params = parse_params(BASE)
    assert (params.search.c_puct, params.search.dirichlet_alpha, params.search.simulations) == (3.0, 1.0, 50)
    assert (params.train.learning_rate, params.train.batch_size, params.train.weight_decay) == (1e-3, 64, 1e-4)
    assert params.final_generation == 1


def test_project_params_file_is_valid():
    params = parse_params(shipped_params())
    assert params.game == "tictacmo"


def test_the_pig_example_params_file_is_valid_and_has_its_stated_settings():
    pig = load_params("examples/pig-goal30.yaml")
    assert (pig.game, pig.search.c_puct, pig.search.simulations, pig.selfplay.root_value_weight) == (
        "pig(players=2,goal=30)",
        1.0,
        100,
        0.5,
    )
    assert pig.generations == parse_params(shipped_params()).generations


def test_the_connect4_sweep_example_params_file_is_valid():
    params = load_params("examples/connect4-sweep.yaml")
    assert (params.game, params.sweep.study, params.sweep.panel) == (
        "connect4",
        "connect4-search",
        ["uct:100", "alphabeta:2", "alphabeta:4"],
    )


def test_old_names_of_the_search_budget_are_read_with_one_notice_each(capsys):
    old = with_(
        search={"rollouts": 12},
        selfplay={"fast_rollouts": 3},
        sweep={"eval_rollouts": 7, "space": {"search.rollouts": {"low": 5, "high": 20}}},
    )
    params = parse_params(old, "old.yaml")
    assert (params.search.simulations, params.selfplay.fast_simulations, params.sweep.eval_simulations) == (12, 3, 7)
    assert list(params.sweep.space) == ["search.simulations"]
    assert capsys.readouterr().err.splitlines() == [
        "old.yaml: search.rollouts is deprecated, read as search.simulations; rename it",
        "old.yaml: selfplay.fast_rollouts is deprecated, read as selfplay.fast_simulations; rename it",
        "old.yaml: sweep.eval_rollouts is deprecated, read as sweep.eval_simulations; rename it",
        "old.yaml: sweep.space: search.rollouts is deprecated, read as search.simulations; rename it",
    ]
    assert parse_params(with_(search={"simulations": 12})) == parse_params(with_(search={"rollouts": 12}))
    with pytest.raises(ConfigError, match="^x.yaml: search.rollouts and search.simulations name one param; keep"):
        parse_params(with_(search={"rollouts": 12, "simulations": 12}), "x.yaml")


def test_unreadable_files_fail_clearly(tmp_path):
    with pytest.raises(ConfigError, match="file not found"):
        load_params(tmp_path / "none.yaml")
    broken = tmp_path / "params.yaml"
    broken.write_text("game: [tictacmo\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_params(broken)
    broken.write_text(yaml.safe_dump(["a", "list"]))
    with pytest.raises(ConfigError, match="expected a mapping"):
        load_params(broken)
    broken.write_bytes("game: tictacmo\nseed: 0 # \u00e9\n".encode("latin-1"))
    with pytest.raises(ConfigError, match="params.yaml: line 2 is not UTF-8 text; expected a YAML file in UTF-8"):
        load_params(broken)
    with pytest.raises(ConfigError, match=r": is a folder; expected a YAML file"):
        load_params(tmp_path)


def test_numbers_written_as_yaml_strings_still_count():
    params = parse_params(with_(train={"learning_rate": "1e-3"}, search={"c_puct": 2}))
    assert (params.train.learning_rate, params.search.c_puct) == (0.001, 2.0)


def test_the_connect4_long_run_example_has_its_stated_settings():
    params = load_params("examples/connect4.yaml")
    stated = (params.game, params.network.blocks, params.network.channels, params.search.simulations)
    assert stated == ("connect4", 5, 64, 100)
    assert params.evaluate.benchmark.simulations == [0, 600] and params.evaluate.benchmark.every_generation
    assert params.final_generation == 20


def test_a_yaml_alias_bomb_is_refused_before_it_is_expanded(tmp_path):
    """Nine levels of nine aliases stand for 9^9 values: refused from the node graph, never expanded."""
    lines = ['a0: &a0 ["lol"]'] + [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    bomb = tmp_path / "params.yaml"
    bomb.write_text("\n".join([*lines, "game: tictacmo", "search: {c_puct: *a9}"]))
    with pytest.raises(ConfigError, match=r"aliases expand to more than 100,000 values"):
        load_params(bomb)


@pytest.mark.parametrize(
    ("text", "line", "key"),
    [
        ("game: tictacmo\nseed: 1\nseed: 2\n", 3, "seed"),
        ("game: tictacmo\nsearch:\n  c_puct: 1\n  c_puct: 3\n", 4, "c_puct"),
        ("game: tictacmo\nsearch: {c_puct: 1, c_puct: 2}\n", 2, "c_puct"),
    ],
)
def test_a_key_given_twice_is_refused_as_dvc_refuses_it(tmp_path, text, line, key):
    path = tmp_path / "params.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=rf"^{path}: line {line}: key '{key}' given twice; expected each once$"):
        load_params(path)


def test_the_same_key_in_two_mappings_and_a_merge_key_are_not_duplicates(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_text(
        "game: tictacmo\ngenerations: [{gen: 1, prev: 0}]\nselfplay: &games {games: 8}\n"
        "teacher: {<<: *games, games: 9}\nsearch: {simulations: 8}\n"
    )
    params = load_params(path)
    assert (params.selfplay.games, params.teacher.games, params.search.simulations) == (8, 9, 8)


DEEP = 20_000


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("game: tictacmo\nx: &r [*r]\n", r"line 2: a YAML alias inside the value it names"),
        ("game: tictacmo\nx: &r {a: {b: *r}}\n", r"line 2: a YAML alias inside the value it names"),
        ("x: &r [1, *r]\ngame: tictacmo\nsearch: {c_puct: *r}\n", r"line 1: a YAML alias inside the value it names"),
        ("game: " + "[" * DEEP + "]" * DEEP + "\n", r"line 1: nested more than 64 levels deep"),
        ("".join(f"{' ' * i}k{i}:\n" for i in range(DEEP // 10)), r"line 65: nested more than 64 levels deep"),
    ],
)
def test_yaml_that_would_recurse_without_end_is_one_line_naming_the_file(tmp_path, text, message):
    """PyYAML's composer and a walk of the nodes recurse once a level: these gave a RecursionError."""
    path = tmp_path / "params.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=rf"^{path}: {message}; expected a params file$"):
        load_params(path)


def test_a_file_that_never_ends_or_is_huge_is_refused_before_it_is_read_whole(tmp_path):
    with pytest.raises(ConfigError, match=r"^/dev/zero: not a regular file \(a device or a pipe\); expected a YAML"):
        load_params("/dev/zero")
    pipe = tmp_path / "pipe.yaml"
    os.mkfifo(pipe)  # opening it would wait for a writer forever
    with pytest.raises(ConfigError, match="not a regular file"):
        load_params(pipe)
    huge = tmp_path / "huge.yaml"
    huge.write_text("# " + "x" * (MAX_YAML_BYTES + 1))
    with pytest.raises(ConfigError, match=rf"^{huge}: larger than 4 MB; expected a params file$"):
        load_params(huge)


def test_a_nest_of_aliases_under_a_field_is_quoted_short():
    nest = ["x"] * 3
    for _ in range(20):
        nest = [nest] * 3  # shared, as YAML aliases are: 3^20 leaves if written out whole
    with pytest.raises(ConfigError, match=r"search.c_puct: .*\(got \[\[\[\.\.\.\], .{20,60}\)$"):
        parse_params(with_(search={"c_puct": nest}))


@pytest.mark.parametrize("name", ["params.yaml", *sorted(p.name for p in (ROOT / "examples").glob("*.yaml"))])
def test_dvc_exp_run_set_param_changes_only_the_line_it_sets(name, tmp_path):
    """`dvc exp run -S` writes the params file back in DVC's layout: a file in another layout (`null`
    spelt out, an indented list) came back rewritten, line after line, in the experiment's commit."""
    from dvc.utils.serialize import modify_yaml

    source = ROOT / name if name == "params.yaml" else ROOT / "examples" / name
    copy = tmp_path / "params.yaml"
    copy.write_text(source.read_text())
    with modify_yaml(copy) as data:
        data["seed"] = 12345
    before, after = source.read_text().splitlines(), copy.read_text().splitlines()
    changed = [(old, new) for old, new in zip(before, after) if old != new]
    assert len(before) == len(after) and len(changed) == 1 and changed[0][1].startswith("seed: 12345"), changed[:3]


def test_a_file_of_millions_of_values_under_the_size_cap_is_refused_by_its_count(tmp_path):
    """A 4 MB list took 156 s and 1.6 GB to compose, then was blamed on aliases: it is refused by its
    count of values, read from the parser's events and given up at the first excess."""
    path = tmp_path / "params.yaml"
    path.write_text("game: tictacmo\nx:\n" + "".join(f"  - {i}\n" for i in range(300_000)))  # 3 MB
    with pytest.raises(ConfigError, match=rf"^{path}: more than 100,000 values; expected a params file$"):
        load_params(path)


def _params_named(section: dict, prefix: str = "") -> set[str]:
    """Every dotted key of a params mapping, sections and leaves."""
    keys = set()
    for key, value in section.items():
        keys.add(prefix + key)
        if isinstance(value, dict):
            keys |= _params_named(value, f"{prefix}{key}.")
    return keys


FULL_EXAMPLES = sorted(
    p.name for p in (ROOT / "examples").glob("*.yaml") if "not named here takes its default" not in p.read_text()
)


@pytest.mark.parametrize("name", FULL_EXAMPLES)
def test_an_example_params_file_runs_under_dvc_repro_as_the_readme_copies_it(name):
    """`cp examples/connect4.yaml params.yaml && dvc repro` (README, "Long runs"): DVC refuses a params file
    that lacks a key a stage declares (examples without `teacher` stopped at `init`). An example that
    names only some params says so in its header and is for `sweep --params`, where the rest default."""
    declared = {
        str(param)
        for stage in yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"].values()
        for param in (stage.get("do") or stage).get("params", [])
    }
    missing = sorted(declared - _params_named(yaml.safe_load((ROOT / "examples" / name).read_text())))
    assert not missing, f"examples/{name} lacks {missing}"
