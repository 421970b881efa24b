import ast
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


SOURCES = sorted((Path(__file__).resolve().parents[1] / "src" / "coffer").glob("*.py"))


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_sources_parse_as_python_3_9(source):
    # The package supports Python 3.9: no syntax from later versions.
    ast.parse(source.read_text(encoding="utf-8"), filename=str(source), feature_version=(3, 9))


USER_CODE = '''
from typing import List, Optional
import coffer

class Dog(coffer.Object):
    name: str = coffer.indexed("")
    age: Optional[int] = None

with coffer.open(None, schema=[Dog]) as db:
    dogs: coffer.Results[Dog] = db.objects(Dog).filter("age > $0", 2).sorted("name", ascending=False)
    first: Dog = dogs[0]
    names: List[str] = [d.name for d in dogs]
    found: Optional[coffer.Object] = db.object_for_primary_key("Person", 1)
    total = dogs.sum("age")
'''


def test_package_and_user_code_type_check_strictly(tmp_path):
    mypy = pytest.importorskip("mypy.api")
    user = tmp_path / "user.py"
    user.write_text(USER_CODE, encoding="utf-8")
    src = Path(__file__).resolve().parents[1] / "src"
    out, err, status = mypy.run(["--strict", "--no-incremental", "--cache-dir", str(tmp_path / "cache"),
                                 str(src / "coffer"), str(user)])
    assert status == 0, out + err
