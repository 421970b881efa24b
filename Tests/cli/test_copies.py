"""compact and copy: write-copies that keep, add, remove or change a file's
encryption, and the errors of their options."""

import pytest
from clitool import KEY, OTHER_KEY, make_dog_file, make_rich_file, ok, run

import coffer


def test_copy_keeps_encryption_and_contents(tmp_path, key_files):
    hex_key, _ = key_files
    for key, args in [(None, []), (KEY, ["--key-file", hex_key])]:
        source = str(tmp_path / f"src-{bool(key)}.coffer")
        make_rich_file(source, key)
        target = str(tmp_path / f"dst-{bool(key)}.coffer")
        assert ok("copy", source, target, *args) == ""
        assert ok("export", target, *args) == ok("export", source, *args)
        if key:
            assert run("count", target).code == 1  # still encrypted


def test_encrypt_rekey_decrypt(tmp_path, key_files):
    hex_key, raw_other = key_files
    plain = str(tmp_path / "plain.coffer")
    make_dog_file(plain, dogs=4)
    expected = ok("export", plain)
    enc = str(tmp_path / "enc.coffer")
    ok("copy", plain, enc, "--encrypt", "--new-key-file", hex_key)
    assert b"dog1" not in open(enc, "rb").read()
    assert ok("export", enc, "--key-file", hex_key) == expected
    rekeyed = str(tmp_path / "rekeyed.coffer")
    ok("copy", enc, rekeyed, "--rekey", "--key-file", hex_key, "--new-key-file", raw_other)
    r = run("count", rekeyed, "--key-file", hex_key)
    assert r.code == 1 and "wrong key" in r.err
    assert ok("export", rekeyed, "--key-file", raw_other) == expected
    with coffer.open(rekeyed, encryption_key=OTHER_KEY) as db:
        assert len(db.objects("Dog")) == 4
    back = str(tmp_path / "back.coffer")
    ok("copy", rekeyed, back, "--decrypt", env={"COFFER_KEY": OTHER_KEY.hex()})
    assert ok("export", back) == expected


@pytest.mark.parametrize("args, message", [
    (["--encrypt", "--decrypt"], "at most one"),
    (["--encrypt"], "--new-key-file"),
    (["--rekey"], "--new-key-file"),
    (["--new-key-file", "k"], "goes with --encrypt or --rekey"),
])
def test_copy_usage_errors(tmp_path, args, message):
    source = str(tmp_path / "a.coffer")
    make_dog_file(source)
    r = run("copy", source, str(tmp_path / "b.coffer"), *args)
    assert r.code == 2 and message in r.err, r
    assert not (tmp_path / "b.coffer").exists()


def test_copy_errors(tmp_path, key_files):
    hex_key, raw_other = key_files
    plain = str(tmp_path / "plain.coffer")
    make_dog_file(plain)
    existing = tmp_path / "exists.coffer"
    existing.write_bytes(b"keep me")
    r = run("copy", plain, str(existing))
    assert r.code == 1 and "exists" in r.err
    assert existing.read_bytes() == b"keep me"
    r = run("copy", plain, str(tmp_path / "x.coffer"), "--decrypt")
    assert r.code == 1 and "not encrypted" in r.err
    r = run("copy", plain, str(tmp_path / "x.coffer"), "--rekey", "--new-key-file", hex_key)
    assert r.code == 1 and "not encrypted" in r.err
    enc = str(tmp_path / "enc.coffer")
    make_dog_file(enc, KEY)
    r = run("copy", enc, str(tmp_path / "y.coffer"), "--encrypt", "--key-file", hex_key, "--new-key-file", raw_other)
    assert r.code == 1 and "already encrypted" in r.err
    bad = tmp_path / "bad.key"
    bad.write_text("12")
    r = run("copy", plain, str(tmp_path / "z.coffer"), "--encrypt", "--new-key-file", str(bad))
    assert r.code == 1 and "not a key" in r.err
    assert not (tmp_path / "z.coffer").exists()


@pytest.mark.parametrize("key", [None, KEY], ids=["plain", "encrypted"])
def test_compact_drops_free_pages(tmp_path, key_files, key):
    args = ["--key-file", key_files[0]] if key else []
    path = str(tmp_path / "big.coffer")
    make_dog_file(path, key, dogs=3000)
    with coffer.open(path, encryption_key=key) as db:
        with db.write():
            for dog in list(db.objects("Dog").filter("id >= 10")):
                db.delete(dog)
    before = (tmp_path / "big.coffer").stat().st_size
    out = ok("compact", path, *args)
    after = (tmp_path / "big.coffer").stat().st_size
    assert after < before
    assert out == f"{path}: {before} -> {after} bytes\n"
    assert ok("count", path, "Dog", *args) == "10\n"
