import sys

from textxai.cli import main

sys.exit(main())
