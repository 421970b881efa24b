import pickle

import pytest

import coffer
from coffer.errors import ERROR_CLASSES, error_for


def test_every_failure_status_has_its_own_class():
    failures = [s for s in coffer.Status if s not in (coffer.Status.OK, coffer.Status.DONE)]
    assert sorted(ERROR_CLASSES) == sorted(failures)
    assert len(set(ERROR_CLASSES.values())) == len(failures)
    for status, cls in ERROR_CLASSES.items():
        err = error_for(status, "message")
        assert type(err) is cls and err.status == status and err.message == "message"
        assert cls.default_status == status
        assert isinstance(err, coffer.CofferError)


def test_unknown_status_gives_a_plain_error():
    err = error_for(99, "")
    assert type(err) is coffer.CofferError and err.status == 99 and err.message == "coffer status 99"


def test_python_exception_bases():
    assert issubclass(coffer.InvalidArgumentError, ValueError)
    assert issubclass(coffer.PropertyTypeError, TypeError)
    assert issubclass(coffer.NotFoundError, LookupError)
    assert issubclass(coffer.PropertyNotFoundError, KeyError)
    assert issubclass(coffer.PropertyNotFoundError, AttributeError)
    assert issubclass(coffer.FileAccessError, OSError)
    assert issubclass(coffer.CofferMemoryError, MemoryError)
    for cls in (coffer.KeyRequiredError, coffer.WrongKeyError, coffer.NotEncryptedError):
        assert issubclass(cls, coffer.EncryptionError)
    assert issubclass(coffer.DatabaseClosedError, coffer.MisuseError)


def test_errors_pickle_with_their_status():
    err = pickle.loads(pickle.dumps(coffer.WrongKeyError("the key does not open 'x'")))
    assert type(err) is coffer.WrongKeyError
    assert err.status == coffer.Status.WRONG_KEY and str(err) == "the key does not open 'x'"


def test_c_errors_carry_the_c_message(db_path):
    with pytest.raises(coffer.NotFoundError) as info:
        coffer.open(db_path, read_only=True)
    assert info.value.status == coffer.Status.NOT_FOUND
    assert info.value.message == f"cannot open '{db_path}' read-only: the file does not exist"
