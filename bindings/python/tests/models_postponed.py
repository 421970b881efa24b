"""A model declared with postponed (string) annotations."""

from __future__ import annotations

from typing import Optional

import coffer


class Later(coffer.Object):
    n: Optional[int] = None
    when: Optional[coffer.ObjectId] = None
