import pytest
from conftest import KEY, OTHER_KEY
from models import PERSON

import coffer


def write_secret(path, key=KEY):
    with coffer.open(path, schema=[PERSON], encryption_key=key) as db:
        with db.write():
            db.create("Person", {"name": "Zebediah-Secret", "email": "zeb@example.org"})


def test_encrypted_file_reopens_with_its_key(db_path):
    write_secret(db_path)
    with coffer.open(db_path, schema=[PERSON], encryption_key=bytearray(KEY)) as db:
        assert db.is_encrypted
        assert db.object_for_primary_key("Person", "Zebediah-Secret").email == "zeb@example.org"
    assert coffer.ENCRYPTION_KEY_SIZE == 64


def test_encrypted_file_hides_data_and_schema(db_path):
    write_secret(db_path)
    raw = open(db_path, "rb").read()
    for text in (b"Zebediah", b"zeb@example", b"Person", b"email"):
        assert text not in raw


def test_wrong_key(db_path):
    write_secret(db_path)
    with pytest.raises(coffer.WrongKeyError, match="does not open") as info:
        coffer.open(db_path, schema=[PERSON], encryption_key=OTHER_KEY)
    assert isinstance(info.value, coffer.EncryptionError)
    assert info.value.status == coffer.Status.WRONG_KEY


def test_missing_key(db_path):
    write_secret(db_path)
    with pytest.raises(coffer.KeyRequiredError, match="is encrypted"):
        coffer.open(db_path, schema=[PERSON])


def test_key_for_a_plain_file(db_path):
    with coffer.open(db_path, schema=[PERSON]):
        pass
    with pytest.raises(coffer.NotEncryptedError, match="not encrypted"):
        coffer.open(db_path, schema=[PERSON], encryption_key=KEY)


@pytest.mark.parametrize("size", [0, 32, 63, 65])
def test_key_of_the_wrong_size_names_the_size(db_path, size):
    with pytest.raises(coffer.InvalidArgumentError, match=str(size)):
        coffer.open(db_path, schema=[PERSON], encryption_key=bytes(size))


def test_key_must_be_bytes(db_path):
    with pytest.raises(TypeError, match="encryption_key must be bytes"):
        coffer.open(db_path, schema=[PERSON], encryption_key="k" * 64)


def test_in_memory_encrypted(memory_id):
    with coffer.open(in_memory_identifier=memory_id, schema=[PERSON], encryption_key=KEY) as db:
        assert db.is_encrypted
        with db.write():
            db.create("Person", {"name": "Ann"})
        assert db.objects("Person")[0].name == "Ann"


def test_encrypted_seed_file(tmp_path):
    seed = str(tmp_path / "seed.coffer")
    write_secret(seed)
    with coffer.open(str(tmp_path / "copy.coffer"), seed_path=seed, schema=[PERSON], encryption_key=KEY) as db:
        assert len(db.objects("Person")) == 1
