"""`python -m pipeline champions`: the shipped champions, one line each, from their cards."""

from pipeline.champions import names, summary
from pipeline.commands.cli import command_parser
from pipeline.jobs.entry import entry_point


@entry_point
def main(argv):
    command_parser("champions", __doc__).parse_args(argv)
    for name in names():
        print(summary(name))
    if not names():
        print("no champion is shipped")


if __name__ == "__main__":
    main()
