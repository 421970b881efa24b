"""examples/cli/rebuild.sh, the one-line use of the tool, run as a user
would, with `coffer` on PATH."""

import os
import subprocess
from pathlib import Path

from clitool import CLI, KEY, ROOT, make_rich_file, ok


def test_rebuild_example(tmp_path):
    source = str(tmp_path / "rich.coffer")
    make_rich_file(source, KEY)
    target = str(tmp_path / "rebuilt.coffer")
    env = dict(os.environ, PATH=f"{Path(CLI).parent}{os.pathsep}{os.environ['PATH']}", COFFER_KEY=KEY.hex())
    subprocess.run([str(ROOT / "examples" / "cli" / "rebuild.sh"), source, target], check=True, env=env)
    key_env = {"COFFER_KEY": KEY.hex()}
    assert ok("count", target, env=key_env) == ok("count", source, env=key_env)
