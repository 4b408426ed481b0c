"""The failures a user's input causes, defined on the ground floor so that every floor can raise them
and the entry point (`harness/entry.py`) turns each into one line without importing the floor above."""


class ConfigError(ValueError):
    """A bad params file; the message is one line naming the field and what was expected."""
