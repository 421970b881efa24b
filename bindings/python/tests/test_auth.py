"""The authentication classes without a service: App's URL handling,
Credentials, SyncConfig's user and token, the token source the core calls
(a fresh token after TOKEN_EXPIRED, a refused refresh stops the session, an
unreachable service is retried), and AuthError for a service that is not
there. The real service is exercised in Tests/sync/test_sync_auth.py."""

import ctypes
import socket
import time

import pytest

import coffer
from coffer import _capi
from coffer.errors import Status
from coffer.sync import TokenSource


def test_app_url_forms():
    assert coffer.App("http://127.0.0.1:7800").url == "http://127.0.0.1:7800"
    assert coffer.App("ws://127.0.0.1:7800/sync/v1").url == "http://127.0.0.1:7800"
    assert coffer.App("wss://sync.example").url == "https://sync.example"
    assert coffer.App("http://h:1").sync_url == "ws://h:1/sync/v1"
    for bad in ("ftp://h", "127.0.0.1:7800", ""):
        with pytest.raises(coffer.InvalidArgumentError, match="http://HOST:PORT"):
            coffer.App(bad)


def test_credentials():
    assert coffer.Credentials.anonymous().provider == "anonymous"
    creds = coffer.Credentials.email_password("a@b.c", "secret1")
    assert creds.provider == "email-password" and creds.fields == {"email": "a@b.c", "password": "secret1"}
    assert "secret1" not in repr(creds)
    assert coffer.Credentials.jwt("t").fields == {"token": "t"}
    with pytest.raises(coffer.InvalidArgumentError, match="password must be a str"):
        coffer.Credentials.email_password("a@b.c", None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="coffer.Credentials"):
        coffer.App("http://h:1").login("anonymous")  # type: ignore[arg-type]


def test_sync_config_user_and_token():
    with pytest.raises(coffer.InvalidArgumentError, match="user must be a coffer.User"):
        coffer.SyncConfig(url="ws://h:1/sync/v1", partition="p", user="someone")  # type: ignore[arg-type]
    with pytest.raises(coffer.InvalidArgumentError, match="token must be a str"):
        coffer.SyncConfig(url="ws://h:1/sync/v1", partition="p", token=5)  # type: ignore[arg-type]


def test_an_unreachable_service_is_an_auth_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(coffer.AuthError, match="cannot be reached") as refused:
        coffer.App(f"http://127.0.0.1:{port}", timeout=5).login(coffer.Credentials.anonymous())
    assert refused.value.http_status == 0 and refused.value.code == "unreachable"


class FakeUser(coffer.User):
    """A User whose refresh answers from a list instead of a service."""

    def __init__(self, answers):
        super().__init__(coffer.App("http://h:1"), "u1", "first", "r1", time.time() + 3600)
        self.answers = list(answers)

    def refresh(self) -> str:
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        with self._lock:
            self._access_token = answer
        return answer


def call(source: TokenSource, refresh: int, size: int = 64):
    buf = ctypes.create_string_buffer(size)
    status = source.fn(None, refresh, ctypes.cast(buf, ctypes.c_void_p), size)
    return status, buf.value.decode()


def test_the_token_source():
    source = TokenSource(FakeUser(["second", coffer.AuthError("refused", 401, "invalid_refresh_token"),
                                   coffer.AuthError("down", 0, "unreachable")]))
    assert call(source, 0) == (Status.OK, "first")
    assert call(source, 1) == (Status.OK, "second")  # TOKEN_EXPIRED: refreshed
    assert call(source, 1)[0] == Status.MISUSE  # a refused refresh stops the session
    assert isinstance(source.last_exception, coffer.AuthError)
    assert call(source, 1)[0] == Status.IO  # an unreachable service is retried
    assert call(source, 0, size=4)[0] == Status.MISUSE  # "second" does not fit in 4 bytes
    assert "more than 3" in str(source.last_exception)


def test_an_expired_token_is_refreshed_before_hello():
    user = FakeUser(["renewed"])
    user._expires_at = time.time() - 1
    assert call(TokenSource(user), 0) == (Status.OK, "renewed")


def test_the_c_setters_are_declared():
    assert _capi.SYNC_TOKEN_MAX == 8192
    config = _capi.ConfigP()
    _capi.coffer_config_new(ctypes.byref(config))
    try:
        with pytest.raises(coffer.InvalidArgumentError, match="at most 8191"):
            _capi.coffer_config_set_sync_token(config, b"x" * 8192)
        _capi.coffer_config_set_sync_token(config, b"token")
        _capi.coffer_config_set_sync_token_callback(config, _capi.SYNC_TOKEN_FN(), None)
    finally:
        _capi.coffer_config_free(config)
