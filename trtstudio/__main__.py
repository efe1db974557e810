from trtstudio.cli import entry

entry()
