import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "python" / "quickstart.py"


@pytest.mark.skipif(not EXAMPLE.is_file(), reason="runs from a checkout of the repository only")
def test_quickstart_example_runs_twice(tmp_path):
    expected = [
        "1: Rex (Husky)",
        "2: Fido (unknown breed)",
        "Fido is now a Beagle; 1 person",
        "refused: class 'Dog' already has an object with primary key 1",
        "deleted Fido: still valid? False; 1 dog left",
    ]
    for _ in range(2):  # the second run reopens the file and updates in place
        run = subprocess.run([sys.executable, str(EXAMPLE)], cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stderr
        assert run.stdout.splitlines() == expected
    assert (tmp_path / "dogs.coffer").is_file()
