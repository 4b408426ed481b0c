"""`python -m pipeline champions`: the shipped champions, one line each, from their cards."""

import argparse

from pipeline.champions import names, summary
from pipeline.commands.cli import entry_point


@entry_point
def main(argv):
    argparse.ArgumentParser(prog="python -m pipeline champions", description=__doc__.splitlines()[0]).parse_args(argv)
    for name in names():
        print(summary(name))
    if not names():
        print("no champion is shipped")


if __name__ == "__main__":
    main()
