"""The network of a checkpoint as an ONNX file, for any ONNX runtime:
`python -m pipeline export CHECKPOINT FILE.onnx` (a shipped champion's name works as CHECKPOINT).

The file's input is `planes` (batch x the game's observation shape, float32, as the game's
`encode_batch` writes it), its outputs `policy_logits` (batch x actions) and `values` (batch x players,
each in [-1, 1], seat order as the game's); its metadata names the game. docs/commands.md shows how to load it
with onnxruntime alone.
"""

from __future__ import annotations

from pathlib import Path

from pipeline import champions
from pipeline.commands.cli import command_parser
from pipeline.commands.networks import file_game, local_game, trusted_game
from pipeline.games import make_game
from pipeline.harness.entry import entry_point
from pipeline.nets.header import check_header
from pipeline.plumbing.atomic import can_write


@entry_point
def main(argv):
    parser = command_parser("export", __doc__)
    parser.add_argument("checkpoint", help="a checkpoint file or a shipped champion's name")
    parser.add_argument("target", type=Path, help="the ONNX file to write")
    args = parser.parse_args(argv)
    if args.target.is_dir():
        parser.error(f"{args.target}: is a folder; expected the ONNX file to write")
    path = champions.resolve(args.checkpoint)
    can_write(args.target)  # a device, a named pipe or a folder not to be written: refused before the work
    spec = file_game(path)  # a module the file names is not imported
    check_header(path, make_game(spec) if spec else None)  # a damaged or misfit file: one line before torch
    from pipeline.nets.checkpoint import checkpoint_game, load_checkpoint
    from pipeline.nets.onnx_runtime import INPUT, OUTPUTS, export_checkpoint

    if spec is None:  # a file the light reader cannot read: torch's reader says why
        load_checkpoint(path)
        spec = trusted_game(checkpoint_game(path), local_game(), path)
    model, game = export_checkpoint(path, args.target, spec)
    shape = " x ".join(map(str, game.observation_shape))
    print(f"{args.target}: {game.name}, {model.shape.blocks}x{model.shape.channels} SENet; "
          f"input {INPUT} (batch x {shape}), outputs {', '.join(OUTPUTS)}")  # fmt: skip


if __name__ == "__main__":
    main()
