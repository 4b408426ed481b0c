"""The command lines, each a module with `main(argv)`."""
