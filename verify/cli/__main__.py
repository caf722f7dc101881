"""``python -m verify.cli``: the same as the ``verify`` console script."""

from verify.cli.main import main

main()
