"""`python -m pipeline <command> [args]`: the command lines of `pipeline/commands/`."""

from pipeline.commands import main

if __name__ == "__main__":
    main()
