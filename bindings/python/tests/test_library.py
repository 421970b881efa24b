import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import coffer
from coffer import _library


def run_python(code, **env_changes):
    env = dict(os.environ)
    for name, value in env_changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)


def test_versions():
    assert re.fullmatch(r"0\.\d+\.\d+", coffer.library_version())
    assert re.fullmatch(r"\d+\.\d+\.\d+", coffer.__version__)


def test_package_is_typed():
    assert (Path(coffer.__file__).parent / "py.typed").is_file()


def test_environment_variable_chooses_the_library():
    wanted = os.environ.get(_library.ENVIRONMENT_VARIABLE)
    if not wanted:
        pytest.skip("COFFER_LIBRARY is not set")
    run = run_python("import coffer; print(coffer.library_path())")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == wanted


def test_bad_environment_variable_names_the_path(tmp_path):
    missing = str(tmp_path / "libnothing.so")
    run = run_python("import coffer", COFFER_LIBRARY=missing)
    assert run.returncode != 0
    assert "ImportError" in run.stderr and missing in run.stderr and "COFFER_LIBRARY" in run.stderr


def test_bundled_library_is_used_without_the_variable():
    bundled = [c for c in _library._bundled_candidates() if c.is_file()]
    if not bundled:
        pytest.skip("this copy of the package has no bundled library (not installed with pip)")
    run = run_python("import coffer; print(coffer.library_path()); print(coffer.library_version())",
                     COFFER_LIBRARY=None)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == [str(bundled[0]), coffer.library_version()]
