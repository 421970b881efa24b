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
    # The suite imports the sources; a child process imports the installed
    # package, which is the copy that bundles the library.
    found = run_python("from coffer import _library; "
                       "print(*[c for c in _library._bundled_candidates() if c.is_file()][:1])",
                       COFFER_LIBRARY=None)
    bundled = found.stdout.strip()
    if found.returncode != 0 or not bundled:
        pytest.skip("no installed copy of the package with a bundled library (pip install ./bindings/python)")
    run = run_python("import coffer; print(coffer.library_path()); print(coffer.library_version())",
                     COFFER_LIBRARY=None)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == [bundled, coffer.library_version()]
