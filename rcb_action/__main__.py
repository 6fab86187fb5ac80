import sys

from rcb_action.cli import main

sys.exit(main())
