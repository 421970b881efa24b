"""Users and authentication against the real service and PostgreSQL
(docs/SYNC.md, "Users and authentication"): logins of every provider,
registration's and login's refusals, custom JWTs (a good one, and a wrong
signature, an expired one, a wrong audience), HELLOs without a valid token
refused with the documented codes and nothing of them in PostgreSQL, a
session that refreshes its 2-second token by itself, logout, the
configuration's errors, and development mode without `auth`."""

import base64
import hashlib
import hmac
import json
import os
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Dict, List

import pytest

import coffer
from conftest import SERVICE_BIN, WAIT_S, CClient, ClientError, Note, Service, service_dump

SECRET = "s" * 40  # the service's signing secret
JWT_SECRET = "the identity provider's shared secret"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def hs256(claims: Dict[str, Any], secret: str) -> str:
    """A JWT signed with HS256, as an identity provider makes it."""
    head = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64url(json.dumps(claims).encode())
    sig = hmac.new(secret.encode(), f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{b64url(sig)}"


def psql(postgres: str, sql: str) -> str:
    out = subprocess.run(["psql", postgres, "-Atc", sql], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def write_config(tmp_path: Path, **auth: Any) -> Path:
    config = tmp_path / f"coffer-sync-{time.monotonic_ns()}.json"
    config.write_text(json.dumps({"auth": auth}))
    return config


DEFAULT_AUTH: Dict[str, Any] = {
    "anonymous": True,
    "emailPassword": True,
    "jwt": {"algorithm": "HS256", "secret": JWT_SECRET, "audience": "my-app", "issuer": "https://id.example"},
}


@pytest.fixture
def auth_service(postgres, tmp_path, services) -> Service:
    """A service with every provider; the signing secret from the environment."""
    service = Service(postgres, tmp_path, config=write_config(tmp_path, **DEFAULT_AUTH),
                      env={"COFFER_SYNC_SIGNING_SECRET": SECRET})
    services.append(service)
    return service


@pytest.fixture
def short_service(postgres, tmp_path, services) -> Service:
    """Access tokens that live 2 seconds; the secret in the file."""
    service = Service(postgres, tmp_path, config=write_config(
        tmp_path, anonymous=True, signingSecret=SECRET, accessTokenLifetime=2))
    services.append(service)
    return service


def open_db(dbs, tmp_path: Path, url: str, partition: str, **sync: Any) -> coffer.Database:
    db = coffer.open(str(tmp_path / f"{len(dbs)}.coffer"), schema=[Note],
                     sync=coffer.SyncConfig(url=url, partition=partition, transport="builtin", **sync))
    dbs.append(db)
    return db


def put(db: coffer.Database, id: int, text: str) -> None:
    with db.write():
        db.create(Note, {"id": id, "text": text}, update="modified")


def wait_failed(db: coffer.Database) -> str:
    deadline = time.monotonic() + WAIT_S
    while db.sync.state != "failed":
        assert time.monotonic() < deadline, f"the session was not refused: {db.sync.state} {db.sync.error}"
        time.sleep(0.01)
    return db.sync.error


def texts(postgres: str, partition: str) -> List[str]:
    return sorted(json.loads(line)["properties"]["text"] for line in service_dump(postgres, partition))


# ---- logins ----------------------------------------------------------------


def test_anonymous_login_then_sync(auth_service, postgres, partition, tmp_path, dbs):
    app = coffer.App(auth_service.http_url)
    user = app.login(coffer.Credentials.anonymous())
    assert user.id and user.access_token and user.refresh_token
    assert user.access_token_expires_at > time.time() + 25 * 60  # 30 minutes by default
    other = app.login(coffer.Credentials.anonymous())
    assert other.id != user.id  # a new user at each anonymous login
    db = open_db(dbs, tmp_path, app.sync_url, partition, user=user)
    put(db, 1, "from an anonymous user")
    db.sync.wait_for_upload(timeout=WAIT_S)
    assert texts(postgres, partition) == ["from an anonymous user"]
    # The session belongs to the user.
    assert psql(postgres, f"SELECT DISTINCT user_id FROM coffer_sync_clients WHERE partition = '{partition}'") == user.id
    # Only the refresh token's hash is stored.
    stored = psql(postgres, f"SELECT encode(token_hash, 'hex') FROM coffer_sync_refresh_tokens WHERE user_id = '{user.id}'")
    assert stored == hashlib.sha256(user.refresh_token.encode()).hexdigest()
    assert user.refresh_token not in psql(postgres, "SELECT string_agg(encode(token_hash, 'escape'), ',') FROM coffer_sync_refresh_tokens")


def test_the_c_client_syncs_with_an_access_token(auth_service, postgres, partition, tmp_path, clients):
    user = coffer.App(auth_service.http_url).login(coffer.Credentials.anonymous())
    c = CClient(tmp_path / "c.coffer", auth_service.url, partition, token=user.access_token)
    clients.append(c)
    c.put(1, "from-C")
    c.wait_upload()
    assert texts(postgres, partition) == ["from-C"]
    # Without a token the C client is refused, and its commit stays local.
    refused = CClient(tmp_path / "refused.coffer", auth_service.url, partition + "-refused")
    clients.append(refused)
    refused.put(1, "kept-locally")
    with pytest.raises(ClientError, match="AUTH"):
        refused.wait_upload()
    assert service_dump(postgres, partition + "-refused") == set()
    assert '"kept-locally"' in "".join(refused.dump())


def test_register_and_login_with_email(auth_service, postgres):
    app = coffer.App(auth_service.http_url)
    email = f"ada-{time.monotonic_ns()}@example.com"
    user_id = app.register_email(email, "secret1")
    user = app.login(coffer.Credentials.email_password(email.upper(), "secret1"))
    assert user.id == user_id
    stored = psql(postgres, f"SELECT password_hash FROM coffer_sync_identities WHERE subject = '{email}'")
    assert stored.startswith("$argon2id$") and "secret1" not in stored

    with pytest.raises(coffer.AuthError) as wrong:
        app.login(coffer.Credentials.email_password(email, "secret2"))
    with pytest.raises(coffer.AuthError) as unknown:
        app.login(coffer.Credentials.email_password("nobody-" + email, "secret1"))
    for refused in (wrong.value, unknown.value):
        assert refused.http_status == 401 and refused.code == "invalid_credentials"
        assert "the email or the password is wrong" in str(refused)
    assert str(wrong.value) == str(unknown.value)  # nothing tells whether the email exists

    with pytest.raises(coffer.AuthError) as again:
        app.register_email(email, "another password")
    assert again.value.http_status == 409 and again.value.code == "email_taken"
    assert psql(postgres, f"SELECT count(*) FROM coffer_sync_identities WHERE subject = '{email}'") == "1"

    with pytest.raises(coffer.AuthError) as short:
        app.register_email("short-" + email, "12345")
    assert short.value.http_status == 400 and short.value.code == "invalid_password"
    assert "at least 6 characters" in str(short.value)
    with pytest.raises(coffer.AuthError) as empty:
        app.register_email("  ", "secret1")
    assert empty.value.http_status == 400 and "the email is empty" in str(empty.value)


def test_malformed_requests_are_named(auth_service):
    def post(path: str, body: bytes) -> Dict[str, Any]:
        request = urllib.request.Request(auth_service.http_url + path, data=body, method="POST")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        assert refused.value.code == 400
        return json.loads(refused.value.read())

    assert post("/auth/v1/login", b"not json")["error"] == "invalid_request"
    assert "\"provider\"" in post("/auth/v1/login", b"{}")["message"]
    assert post("/auth/v1/login", b'{"provider": "saml"}')["error"] == "invalid_provider"
    assert "\"password\"" in post("/auth/v1/register", b'{"email": "a@b.c"}')["message"]


# ---- custom JWTs -----------------------------------------------------------


def test_custom_jwt_accepted_and_refused(auth_service):
    app = coffer.App(auth_service.http_url)
    now = int(time.time())
    good = {"sub": f"ext-{now}", "aud": "my-app", "iss": "https://id.example", "exp": now + 600}
    user = app.login(coffer.Credentials.jwt(hs256(good, JWT_SECRET)))
    again = app.login(coffer.Credentials.jwt(hs256({**good, "aud": ["other", "my-app"]}, JWT_SECRET)))
    assert again.id == user.id  # the same subject is the same user

    refusals = {
        "signature": hs256(good, "not the provider's secret"),
        "expired": hs256({**good, "exp": now - 10}, JWT_SECRET),
        "aud": hs256({**good, "aud": "someone-else"}, JWT_SECRET),
        "iss": hs256({**good, "iss": "https://evil.example"}, JWT_SECRET),
        "no exp": hs256({k: v for k, v in good.items() if k != "exp"}, JWT_SECRET),
        "no sub": hs256({k: v for k, v in good.items() if k != "sub"}, JWT_SECRET),
        "not a JWT": "garbage",
    }
    for what, token in refusals.items():
        with pytest.raises(coffer.AuthError) as refused:
            app.login(coffer.Credentials.jwt(token))
        assert refused.value.http_status == 401 and refused.value.code == "invalid_token", what
        key = {"signature": "signature", "expired": "expired", "aud": "aud", "iss": "iss", "no exp": "exp",
               "no sub": "sub", "not a JWT": "signature"}[what]
        assert key in str(refused.value), f"{what}: {refused.value}"


# ---- HELLO -----------------------------------------------------------------


def test_hello_without_a_valid_token_is_refused(auth_service, short_service, postgres, partition, tmp_path, dbs):
    app = coffer.App(auth_service.http_url)
    user = app.login(coffer.Credentials.anonymous())
    forged = user.access_token[:-4] + ("AAAA" if not user.access_token.endswith("AAAA") else "BBBB")
    claims = json.loads(base64.urlsafe_b64decode(user.access_token.split(".")[1] + "=="))
    other_key = hs256({**claims, "sub": "someone else"}, "a secret that is not the service's one")
    # A token of the 2-second service, expired by now (same secret, so only expiry fails).
    stale = coffer.App(short_service.http_url).login(coffer.Credentials.anonymous())
    time.sleep(3)

    cases = [("", "AUTH", "carries no token"), (forged, "AUTH", "refused"), (other_key, "AUTH", "refused"),
             (stale.access_token, "TOKEN_EXPIRED", "expired")]
    for i, (token, code, text) in enumerate(cases):
        part = f"{partition}-{i}"
        db = open_db(dbs, tmp_path, auth_service.url, part, token=token)
        put(db, 1, "must not reach the service")
        error = wait_failed(db)
        assert code in error and text in error, f"{token[:20]!r}: {error}"
        with pytest.raises(coffer.MisuseError):
            db.sync.wait_for_upload(timeout=WAIT_S)
        # Nothing of that client reached PostgreSQL.
        assert service_dump(postgres, part) == set()
        assert psql(postgres, f"SELECT count(*) FROM coffer_sync_clients WHERE partition = '{part}'") == "0"
        assert psql(postgres, f"SELECT count(*) FROM coffer_sync_partitions WHERE partition = '{part}'") == "0"


def test_the_session_refreshes_a_2_second_token_by_itself(short_service, postgres, partition, tmp_path, dbs):
    app = coffer.App(short_service.http_url)
    user = app.login(coffer.Credentials.anonymous())
    first = user.access_token
    db = open_db(dbs, tmp_path, app.sync_url, partition, user=user)
    put(db, 1, "before expiry")
    db.sync.wait_for_upload(timeout=WAIT_S)
    for round in range(2):
        time.sleep(2.5)
        # The client believes its token is fresh, so only the service's
        # TOKEN_EXPIRED makes the session refresh it.
        user._expires_at = time.time() + 3600
        db.sync.pause()
        while db.sync.state != "paused":
            time.sleep(0.01)
        db.sync.resume()
        put(db, 2 + round, f"after expiry {round}")
        db.sync.wait_for_upload(timeout=WAIT_S)
        assert db.sync.state == "connected"
    assert user.access_token != first
    assert texts(postgres, partition) == ["after expiry 0", "after expiry 1", "before expiry"]
    log = short_service.log.read_text()
    assert "TOKEN_EXPIRED" in log


def test_after_logout_the_refresh_token_no_longer_works(auth_service, postgres):
    app = coffer.App(auth_service.http_url)
    user = app.login(coffer.Credentials.anonymous())
    old = user.access_token
    assert user.refresh() != "" and user.access_token
    user.logout()
    assert not user.logged_in
    for attempt in (user.refresh, user.logout):
        with pytest.raises(coffer.AuthError) as refused:
            attempt()
        assert refused.value.http_status == 401 and refused.value.code == "invalid_refresh_token"
    assert psql(postgres, f"SELECT revoked IS NOT NULL FROM coffer_sync_refresh_tokens WHERE user_id = '{user.id}'") == "t"
    assert old


def test_a_logged_out_user_stops_its_session(short_service, partition, tmp_path, dbs):
    app = coffer.App(short_service.http_url)
    user = app.login(coffer.Credentials.anonymous())
    db = open_db(dbs, tmp_path, app.sync_url, partition, user=user)
    db.sync.wait_for_download(timeout=WAIT_S)
    user.logout()
    time.sleep(2.5)
    db.sync.pause()
    while db.sync.state != "paused":
        time.sleep(0.01)
    db.sync.resume()
    error = wait_failed(db)
    assert "token callback refused" in error


# ---- configuration and development mode -------------------------------------


def test_configuration_errors_name_the_key(postgres, tmp_path):
    def migrate(auth: Any, env: Dict[str, str] = {}) -> str:
        config = tmp_path / "bad.json"
        config.write_text(json.dumps({"postgres": postgres, "auth": auth}))
        out = subprocess.run([SERVICE_BIN, "migrate", "--config", str(config)], capture_output=True, text=True,
                             timeout=120, env={**os.environ, **env})
        assert out.returncode != 0
        return out.stderr

    assert "unknown setting 'auth.bogus'" in migrate({"anonymous": True, "signingSecret": SECRET, "bogus": 1})
    assert "unknown setting 'auth.jwt.key'" in migrate(
        {"signingSecret": SECRET, "jwt": {"algorithm": "HS256", "secret": "x", "key": "y"}})
    assert "COFFER_SYNC_SIGNING_SECRET" in migrate({"anonymous": True})
    assert "at least 32 bytes" in migrate({"anonymous": True, "signingSecret": "short"})
    assert "at least 32 bytes" in migrate({"anonymous": True}, {"COFFER_SYNC_SIGNING_SECRET": "short"})
    assert "enables no provider" in migrate({"signingSecret": SECRET})
    assert "'auth.accessTokenLifetime'" in migrate({"anonymous": True, "signingSecret": SECRET, "accessTokenLifetime": 0})
    assert "'auth.jwt.algorithm' is 'none'" in migrate({"signingSecret": SECRET, "jwt": {"algorithm": "none"}})
    assert "'auth.jwt.publicKey' is required for RS256" in migrate({"signingSecret": SECRET, "jwt": {"algorithm": "RS256"}})


def test_a_public_key_that_is_not_pem_stops_serve(postgres, tmp_path):
    config = write_config(tmp_path, signingSecret=SECRET, jwt={
        "algorithm": "ES256", "publicKey": "-----BEGIN PUBLIC KEY-----\nnot a key\n-----END PUBLIC KEY-----"})
    out = subprocess.run([SERVICE_BIN, "serve", "--postgres", postgres, "--listen", "127.0.0.1:0",
                          "--config", str(config)], capture_output=True, text=True, timeout=120)
    assert out.returncode != 0
    assert "'auth.jwt.publicKey' is not a PEM P-256 public key" in out.stderr


def test_development_mode_without_auth(postgres, tmp_path, services, partition, dbs):
    service = Service(postgres, tmp_path)
    services.append(service)
    with pytest.raises(coffer.AuthError) as refused:
        coffer.App(service.http_url).login(coffer.Credentials.anonymous())
    assert refused.value.http_status == 404 and refused.value.code == "auth_disabled"
    db = open_db(dbs, tmp_path, service.url, partition)
    put(db, 1, "no token needed")
    db.sync.wait_for_upload(timeout=WAIT_S)
    assert "development mode" in service.log.read_text()


# ---- custom JWTs signed with a private key (RS256, ES256) --------------------


def der_to_raw(der: bytes, size: int = 32) -> bytes:
    """An ECDSA signature from DER (openssl) to JWS's r || s."""
    assert der[0] == 0x30
    i = 2 if der[1] < 0x80 else 2 + (der[1] & 0x7F)
    out = b""
    for _ in range(2):
        assert der[i] == 0x02
        n = der[i + 1]
        out += der[i + 2:i + 2 + n].lstrip(b"\0").rjust(size, b"\0")
        i += 2 + n
    return out


def signed_with_key(claims: Dict[str, Any], alg: str, key: Path) -> str:
    head = b64url(json.dumps({"alg": alg, "typ": "JWT", "kid": "provider-key-1"}).encode())
    body = b64url(json.dumps(claims).encode())
    signature = subprocess.run(["openssl", "dgst", "-sha256", "-sign", str(key)], input=f"{head}.{body}".encode(),
                               capture_output=True, check=True).stdout
    if alg == "ES256":
        signature = der_to_raw(signature)
    return f"{head}.{body}.{b64url(signature)}"


@pytest.mark.parametrize("alg", ["RS256", "ES256"])
def test_custom_jwt_with_a_public_key(alg, postgres, tmp_path, services):
    def keypair(name: str) -> Path:
        key = tmp_path / f"{name}.pem"
        make = (["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"] if alg == "RS256"
                else ["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"])
        subprocess.run(make + ["-out", str(key)], check=True, capture_output=True)
        return key

    key, other = keypair("provider"), keypair("other")
    public = subprocess.run(["openssl", "pkey", "-in", str(key), "-pubout"], check=True, capture_output=True,
                            text=True).stdout
    service = Service(postgres, tmp_path, config=write_config(
        tmp_path, signingSecret=SECRET, jwt={"algorithm": alg, "publicKey": public}))
    services.append(service)
    app = coffer.App(service.http_url)
    claims = {"sub": f"{alg}-{time.monotonic_ns()}", "exp": int(time.time()) + 600}
    user = app.login(coffer.Credentials.jwt(signed_with_key(claims, alg, key)))
    assert user.id and user.access_token
    for bad in (signed_with_key(claims, alg, other), signed_with_key({**claims, "exp": int(time.time()) - 5}, alg, key)):
        with pytest.raises(coffer.AuthError) as refused:
            app.login(coffer.Credentials.jwt(bad))
        assert refused.value.http_status == 401 and refused.value.code == "invalid_token"
    # A provider that is not enabled is named.
    with pytest.raises(coffer.AuthError) as disabled:
        app.login(coffer.Credentials.anonymous())
    assert disabled.value.http_status == 400 and disabled.value.code == "provider_disabled"
