"""`python -m pipeline champions [NAME]`: the shipped champions, one line each, from their cards; with
a NAME, that champion's whole card (how it was trained, its figures, how to reproduce it), which ships
inside the package, so a pip install has it too."""

from pipeline.champions import card_path, names, summary
from pipeline.commands.cli import command_parser
from pipeline.harness.entry import UsageError, entry_point


@entry_point
def main(argv):
    parser = command_parser("champions", __doc__)
    parser.add_argument("name", nargs="?", help="a champion whose card to print")
    args = parser.parse_args(argv)
    if args.name is not None:
        if args.name not in names():
            raise UsageError(f"{args.name}: no such champion; expected one of {', '.join(names())}")
        print(card_path(args.name).read_text(), end="")
        return
    for name in names():
        print(summary(name))
    if not names():
        print("no champion is shipped")


if __name__ == "__main__":
    main()
