"""PyInstaller entry point of the trtstudio bundle: the same ``trtstudio`` command line."""

from trtstudio.cli import entry

if __name__ == "__main__":
    entry()
