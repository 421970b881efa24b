"""What coffer.verify() and Database.verify() return: the findings of the
library's integrity check (coffer_verify() in C) as a list of Finding
records, read out of the C report, which this module frees. It sits just
above _capi: database.py and opening.py call it."""

from __future__ import annotations

import ctypes
import enum
from dataclasses import dataclass
from typing import Any, Callable, List, Optional

from . import _capi


class FindingKind(enum.IntEnum):
    """What a finding is about (the numbers of coffer_verify_kind)."""

    FILE = 1
    META = 2
    PAGE = 3
    NODE = 4
    KEY_ORDER = 5
    OVERFLOW = 6
    PAGE_SHARED = 7
    FREE_LIST = 8
    TREE = 9
    HEADER = 10
    RECORD = 11
    INDEX = 12
    PRIMARY_KEY = 13
    LINK = 14
    BACKLINK = 15
    COLLECTION = 16
    COUNTER = 17
    CHANGE_LOG = 18

    @property
    def description(self) -> str:
        """The library's English name of the kind ("meta page", "record", ...)."""
        name: bytes = _capi.coffer_verify_kind_name(int(self))
        return name.decode("ascii")


@dataclass(frozen=True)
class Finding:
    """One thing wrong with a database file.

    kind: what it is about; page: the page of the file (None when not tied
    to one); class_name and object_key: the object, when it is about one;
    message: what is wrong, in English.
    """

    kind: FindingKind
    page: Optional[int]
    class_name: Optional[str]
    object_key: Optional[int]
    message: str

    def __str__(self) -> str:
        where = f"page {self.page}" if self.page is not None else "no page"
        if self.class_name is not None:
            where += f", {self.class_name}"
            if self.object_key:
                where += f" #{self.object_key}"
        return f"{self.kind.description} ({where}): {self.message}"


def _kind(value: int) -> FindingKind:
    try:
        return FindingKind(value)
    except ValueError:  # a kind a newer library added: keep the finding
        return FindingKind.TREE


def run(call: Callable[[Any], int]) -> List[Finding]:
    """Runs `call(byref(report))` (coffer_verify or coffer_db_verify, which
    raise CofferError on failure) and returns the report's findings."""
    report = _capi.VerifyReportP()
    call(ctypes.byref(report))
    try:
        findings: List[Finding] = []
        for i in range(_capi.coffer_verify_report_count(report)):
            page = _capi.coffer_verify_report_page(report, i)
            cls = _capi.coffer_verify_report_class(report, i)
            key = _capi.coffer_verify_report_object_key(report, i)
            message = _capi.coffer_verify_report_message(report, i) or b""
            findings.append(Finding(
                kind=_kind(_capi.coffer_verify_report_kind(report, i)),
                page=None if page == _capi.VERIFY_NO_PAGE else page,
                class_name=cls.decode("utf-8", "replace") if cls is not None else None,
                object_key=key or None,
                message=message.decode("utf-8", "replace"),
            ))
        omitted = _capi.coffer_verify_report_omitted(report)
        if omitted:
            findings.append(Finding(FindingKind.TREE, None, None, None,
                                    f"{omitted} more findings were left out of the report"))
        return findings
    finally:
        _capi.coffer_verify_report_free(report)
