#!/usr/bin/env bash
# Rebuilds a database through JSON lines: every object of SOURCE, exported
# and imported into a new file TARGET in one write transaction (any key comes
# from COFFER_KEY). Run by Tests/cli/test_cli_example.py.
# Usage: rebuild.sh SOURCE TARGET
set -euo pipefail
coffer export "$1" | coffer import "$2"
