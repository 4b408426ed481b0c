"""A params file read safely and into the schema: size, depth and aliases refused in a line before
PyYAML expands them, then one error line naming the field that the schema refuses."""

from __future__ import annotations

import stat
from pathlib import Path

import yaml
from pydantic import ValidationError

from pipeline.config.renames import renamed
from pipeline.config.schema import Params, describe_error
from pipeline.plumbing.failures import ConfigError


def parse_params(data: dict, source: str = "params.yaml") -> Params:
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a mapping of sections at the top level")
    data = renamed(data, source)
    try:
        return Params.model_validate(data)
    except ValidationError as err:
        raise ConfigError(f"{source}: {describe_error(err.errors()[0])}") from None


MAX_YAML_VALUES = 100_000  # a params file has a few hundred; YAML aliases could make one of billions
MAX_YAML_DEPTH = 64  # a params file nests four deep; PyYAML's reader recurses once a level
MAX_YAML_BYTES = 4 * 2**20  # a params file is a few kilobytes


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [child for pair in node.value for child in pair]
    return node.value if isinstance(node, yaml.SequenceNode) else []


def _expanded_size(root: yaml.Node, path: Path) -> int:
    """How many values `root` stands for once its aliases are expanded, each shared node counted once
    per use but walked once, so a nest of aliases is measured without being expanded. Walked with a
    stack of its own, not Python's: an alias inside the value it names (`x: &r [*r]`) is a ConfigError."""
    sizes: dict[int, int] = {}
    walking: set[int] = set()  # the nodes from the root down to the one on top of the stack
    stack = [root]
    while stack:
        node = stack[-1]
        if id(node) in sizes:
            stack.pop()
        elif id(node) not in walking:  # first visit: measure its children first
            walking.add(id(node))
            for child in _children(node):
                if id(child) in walking:
                    line = child.start_mark.line + 1
                    raise ConfigError(
                        f"{path}: line {line}: a YAML alias inside the value it names; expected a params file"
                    )
                stack.append(child)
        else:
            sizes[id(node)] = min(1 + sum(sizes[id(child)] for child in _children(node)), MAX_YAML_VALUES + 1)
            walking.discard(id(node))
            stack.pop()
    return sizes[id(root)]


# PyYAML's libyaml reader where it is built with it (the wheels are): the same documents, 30x as fast,
# so a file at the size cap is refused in a fraction of a second, not minutes.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _check_shape(text: str, path: Path) -> None:
    """Refuse a document nested deeper than `MAX_YAML_DEPTH`, or holding more than `MAX_YAML_VALUES`
    values before any alias is expanded, from PyYAML's events: read without recursion (its composer
    recurses once a level into a `RecursionError`) and given up at the first excess, before a
    composer builds a node for each of millions of values."""
    depth = values = 0
    try:
        for event in yaml.parse(text, Loader=_LOADER):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_YAML_DEPTH:
                    raise _too_deep(path, event.start_mark)
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
            elif isinstance(event, yaml.ScalarEvent):
                values += 1
                if values > MAX_YAML_VALUES:
                    raise ConfigError(f"{path}: more than {MAX_YAML_VALUES:,} values; expected a params file")
    except yaml.MarkedYAMLError as err:
        if "flow level" not in str(err):  # libyaml's own limit on nesting, met while it scans ahead
            raise
        raise _too_deep(path, err.problem_mark) from None


def _too_deep(path: Path, mark) -> ConfigError:
    line = mark.line + 1
    return ConfigError(f"{path}: line {line}: nested more than {MAX_YAML_DEPTH} levels deep; expected a params file")


def _read_yaml(text: str, path: Path):
    """The document in `text`, refused (one line) where it nests too deep, where an alias holds itself,
    or where its aliases expand past `MAX_YAML_VALUES`."""
    _check_shape(text, path)
    node = yaml.compose(text, Loader=_LOADER)
    if node is not None and _expanded_size(node, path) > MAX_YAML_VALUES:
        raise ConfigError(
            f"{path}: its YAML aliases expand to more than {MAX_YAML_VALUES:,} values; expected a params file"
        )
    if node is not None:
        _refuse_duplicate_keys(node, path)
    return yaml.load(text, Loader=_LOADER)  # a safe loader (libyaml's where built)


def _refuse_duplicate_keys(root: yaml.Node, path: Path) -> None:
    """A key given twice in one mapping is refused, as DVC refuses the same file: YAML's loaders keep
    the last value silently, so `seed:` twice ran with a seed the user may not have meant."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            keys: set[str] = set()
            for key, _ in node.value:
                if isinstance(key, yaml.ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
                    if key.value in keys:
                        line = key.start_mark.line + 1
                        raise ConfigError(f"{path}: line {line}: key {key.value!r} given twice; expected each once")
                    keys.add(key.value)
        stack.extend(_children(node))


def _read_bytes(path: Path) -> bytes:
    """The file's bytes, refused (one line) where it is not a regular file (`/dev/zero` never ends, a
    pipe may never start) or larger than `MAX_YAML_BYTES`; read with that cap, as a file may grow."""
    mode = path.stat().st_mode
    if stat.S_ISDIR(mode):
        raise ConfigError(f"{path}: is a folder; expected a YAML file")
    if not stat.S_ISREG(mode):
        raise ConfigError(f"{path}: not a regular file (a device or a pipe); expected a YAML file")
    with path.open("rb") as handle:
        raw = handle.read(MAX_YAML_BYTES + 1)
    if len(raw) > MAX_YAML_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_YAML_BYTES // 2**20} MB; expected a params file")
    return raw


def load_params(path: Path | str = "params.yaml") -> Params:
    path = Path(path)
    try:
        raw = _read_bytes(path)
        data = _read_yaml(raw.decode("utf-8"), path)
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found") from None
    except OSError as err:
        raise ConfigError(f"{path}: cannot be read ({err.strerror}); expected a YAML file") from None
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise ConfigError(f"{path}: line {line} is not UTF-8 text; expected a YAML file in UTF-8") from None
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not valid YAML ({str(err).splitlines()[0]})") from None
    return parse_params(data, str(path))
