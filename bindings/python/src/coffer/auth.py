"""Users and authentication with a coffer-sync service (docs/SYNC.md,
"Users and authentication"): App (the service's HTTP endpoints),
Credentials (how a user logs in) and User (its access and refresh tokens).
HTTP is the standard library's urllib. A synced database takes a User in
SyncConfig(user=...) and asks it for a token before every connection,
refreshing it when the service says it expired. This module sits above
errors and below sync.py; it never touches the C library."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Dict, Optional

from .errors import CofferError, InvalidArgumentError, Status

__all__ = ["App", "AuthError", "Credentials", "User"]


class AuthError(CofferError):
    """The service refused an authentication request, or could not be
    reached. `http_status` is the HTTP status (0 when no answer came),
    `code` the service's error code ("invalid_credentials", "email_taken",
    "invalid_password", "invalid_token", "invalid_refresh_token",
    "provider_disabled", "auth_disabled", "unreachable", ...) and `message`
    what was wrong."""

    default_status = Status.IO

    def __init__(self, message: str, http_status: int = 0, code: str = "") -> None:
        super().__init__(message)
        self.http_status = http_status
        self.code = code

    def __reduce__(self) -> Any:
        return (type(self), (self.message, self.http_status, self.code))


@dataclass(frozen=True)
class Credentials:
    """How a user logs in: Credentials.anonymous(),
    Credentials.email_password(email, password) or Credentials.jwt(token)
    (a JWT signed by the app's own identity provider)."""

    provider: str
    fields: Dict[str, str] = field(default_factory=dict, repr=False)

    @staticmethod
    def anonymous() -> "Credentials":
        """A new anonymous user at each login."""
        return Credentials("anonymous")

    @staticmethod
    def email_password(email: str, password: str) -> "Credentials":
        """A user registered with App.register_email()."""
        _require_str(email, "email")
        _require_str(password, "password")
        return Credentials("email-password", {"email": email, "password": password})

    @staticmethod
    def jwt(token: str) -> "Credentials":
        """A JWT of the app's identity provider; its `sub` names the user."""
        _require_str(token, "token")
        return Credentials("jwt", {"token": token})


def _require_str(value: Any, name: str) -> None:
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{name} must be a str, got {type(value).__name__}")


class App:
    """A coffer-sync service's authentication endpoints.

    url: the service, "http://HOST:PORT" (the sync URL's ws:// and the
        /sync/v1 path are accepted too and mapped to it).
    timeout: seconds each HTTP request may take.
    """

    def __init__(self, url: str, timeout: float = 30.0) -> None:
        _require_str(url, "url")
        parts = urllib.parse.urlsplit(url)
        scheme = {"ws": "http", "wss": "https", "http": "http", "https": "https"}.get(parts.scheme)
        if scheme is None or not parts.netloc:
            raise InvalidArgumentError(f"App: url must be http://HOST:PORT (or ws://), got {url!r}")
        self.url = f"{scheme}://{parts.netloc}"
        self.timeout = timeout

    @property
    def sync_url(self) -> str:
        """The service's WebSocket endpoint, for SyncConfig(url=...)."""
        return self.url.replace("http", "ws", 1) + "/sync/v1"

    def _post(self, path: str, body: Dict[str, Any]) -> Dict[str, Any]:
        data = json.dumps(body).encode("utf-8")
        request = urllib.request.Request(self.url + path, data=data, method="POST",
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                answer = json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as exc:
            try:
                error = json.loads(exc.read() or b"{}")
            except ValueError:
                error = {}
            code = str(error.get("error", "http_error"))
            message = str(error.get("message", exc.reason))
            raise AuthError(f"{path}: {message} (HTTP {exc.code} {code})", exc.code, code) from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise AuthError(f"{path}: the service at {self.url} cannot be reached: {exc}", 0, "unreachable") from None
        if not isinstance(answer, dict):
            raise AuthError(f"{path}: the service answered something other than a JSON object", 200, "bad_answer")
        return answer

    def register_email(self, email: str, password: str) -> str:
        """Registers an email/password user and returns its id. Raises
        AuthError: "email_taken" (HTTP 409), "invalid_email",
        "invalid_password" (fewer than 6 characters), "provider_disabled"."""
        _require_str(email, "email")
        _require_str(password, "password")
        return str(self._post("/auth/v1/register", {"email": email, "password": password})["userId"])

    def login(self, credentials: Credentials) -> "User":
        """Logs in and returns the User. Raises AuthError: a wrong email or
        password gives "invalid_credentials" (HTTP 401, the same for both);
        a refused JWT "invalid_token"."""
        if not isinstance(credentials, Credentials):
            raise TypeError(f"credentials must be a coffer.Credentials, got {type(credentials).__name__}")
        answer = self._post("/auth/v1/login", {"provider": credentials.provider, **credentials.fields})
        return User(self, str(answer["userId"]), str(answer["accessToken"]), str(answer["refreshToken"]),
                    float(answer["accessTokenExpiresAt"]))


class User:
    """A logged-in user: `id`, `access_token` (sent in every sync HELLO),
    `refresh_token`, `access_token_expires_at` (seconds since 1970). Safe
    to use from several threads (a sync session refreshes it on its own)."""

    def __init__(self, app: App, id: str, access_token: str, refresh_token: str,
                 access_token_expires_at: float) -> None:
        self.app = app
        self.id = id
        self._access_token = access_token
        self.refresh_token = refresh_token
        self._expires_at = access_token_expires_at
        self._lock = threading.Lock()
        self._logged_out = False

    def __repr__(self) -> str:
        return f"User(id={self.id!r}, logged_in={self.logged_in})"

    @property
    def access_token(self) -> str:
        with self._lock:
            return self._access_token

    @property
    def access_token_expires_at(self) -> float:
        with self._lock:
            return self._expires_at

    @property
    def logged_in(self) -> bool:
        """False after logout()."""
        return not self._logged_out

    def refresh(self) -> str:
        """Gets a new access token with the refresh token and returns it.
        Raises AuthError "invalid_refresh_token" (HTTP 401) once the refresh
        token is revoked (logout()) or expired."""
        answer = self.app._post("/auth/v1/refresh", {"refreshToken": self.refresh_token})
        with self._lock:
            self._access_token = str(answer["accessToken"])
            self._expires_at = float(answer["accessTokenExpiresAt"])
            return self._access_token

    def logout(self) -> None:
        """Revokes the refresh token on the service: it no longer refreshes,
        and sessions stop once the access token expires."""
        self.app._post("/auth/v1/logout", {"refreshToken": self.refresh_token})
        self._logged_out = True

    def token_for_session(self, refresh: bool) -> str:
        """The access token for a sync HELLO: refreshed first when `refresh`
        (the service said it expired) or when it expired already."""
        if refresh or self.access_token_expires_at <= time.time():
            return self.refresh()
        return self.access_token
