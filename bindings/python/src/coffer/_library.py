"""Finds and loads the shared library libcoffer.

Order: the COFFER_LIBRARY environment variable, the copy bundled in this
package at build time, then the system's library search path.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
from pathlib import Path
from typing import List, Tuple

ENVIRONMENT_VARIABLE = "COFFER_LIBRARY"


def _bundled_candidates() -> List[Path]:
    here = Path(__file__).resolve().parent
    if sys.platform == "darwin":
        names = ["libcoffer.dylib"]
    elif sys.platform == "win32":
        names = ["coffer.dll"]
    else:
        names = ["libcoffer.so", "libcoffer.so.0"]
    return [here / name for name in names]


def load() -> Tuple[ctypes.CDLL, str]:
    """Returns the loaded library and the path (or name) it was loaded from."""
    override = os.environ.get(ENVIRONMENT_VARIABLE)
    if override:
        try:
            return ctypes.CDLL(override), override
        except OSError as exc:
            raise ImportError(
                f"coffer: cannot load the library named by {ENVIRONMENT_VARIABLE}={override!r}: {exc}"
            ) from exc

    for candidate in _bundled_candidates():
        if candidate.is_file():
            try:
                return ctypes.CDLL(str(candidate)), str(candidate)
            except OSError as exc:
                raise ImportError(f"coffer: cannot load the bundled library {candidate}: {exc}") from exc

    system_name = ctypes.util.find_library("coffer")
    if system_name:
        try:
            return ctypes.CDLL(system_name), system_name
        except OSError as exc:
            raise ImportError(f"coffer: cannot load the system library {system_name!r}: {exc}") from exc

    tried = ", ".join(str(c) for c in _bundled_candidates())
    raise ImportError(
        "coffer: libcoffer was not found; set "
        f"{ENVIRONMENT_VARIABLE} to its path, reinstall the package (bundled copy looked for at {tried}), "
        "or install libcoffer on the system library path"
    )
