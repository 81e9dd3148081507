"""``python -m bot.cli``: the same as the ``incident-bot`` command."""

import sys

from bot.cli.main import main

sys.exit(main())
