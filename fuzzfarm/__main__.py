"""``python -m fuzzfarm``: the same command line as the ``fuzzfarm`` console script."""
from fuzzfarm.cli import main

if __name__ == "__main__":
    main(prog_name="fuzzfarm")
