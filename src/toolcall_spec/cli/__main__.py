import sys

from toolcall_spec.cli import main

sys.exit(main())
