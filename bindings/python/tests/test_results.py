import pytest
from models import Dog

import coffer


@pytest.fixture
def db(db_path):
    with coffer.open(db_path, schema=[Dog]) as database:
        with database.write():
            for i in range(5):
                database.create(Dog, {"id": i, "name": f"dog{i}"})
        yield database


def test_len_iteration_and_order(db):
    dogs = db.objects(Dog)
    assert len(dogs) == 5 and bool(dogs)
    assert [d.id for d in dogs] == [0, 1, 2, 3, 4]
    assert all(isinstance(d, Dog) for d in dogs)
    assert repr(dogs) == "<coffer.Results of Dog: 5 objects>"


def test_indexing(db):
    dogs = db.objects(Dog)
    assert dogs[0].id == 0 and dogs[4].id == 4
    assert dogs[-1].id == 4 and dogs[-5].id == 0
    assert [d.id for d in dogs[1:3]] == [1, 2]
    assert [d.id for d in dogs[::-2]] == [4, 2, 0]
    assert dogs.index(dogs[2]) == 2 and dogs[3] in dogs
    with pytest.raises(IndexError, match="index 5 is out of range for 5 Dog objects"):
        dogs[5]
    with pytest.raises(IndexError):
        dogs[-6]
    with pytest.raises(TypeError, match="must be integers or slices, not str"):
        dogs["name"]


def test_empty_results(db_path):
    with coffer.open(db_path, schema=[Dog]) as db:
        dogs = db.objects("Dog")
        assert len(dogs) == 0 and not dogs and list(dogs) == []
        with pytest.raises(IndexError):
            dogs[0]


def test_results_follow_writes_of_their_own_handle(db):
    dogs = db.objects(Dog)
    assert len(dogs) == 5
    with db.write():
        db.create(Dog, {"id": 10})
        assert len(dogs) == 6 and dogs[-1].id == 10  # the write sees itself
    assert len(dogs) == 6
    with db.write():
        db.delete(dogs[0])
    assert [d.id for d in dogs] == [1, 2, 3, 4, 10]


def test_reads_stay_on_their_snapshot_until_refresh(db_path, db):
    dogs = db.objects(Dog)
    first = dogs[0]
    assert len(dogs) == 5
    with coffer.open(db_path, schema=[Dog]) as other:
        with other.write():
            other.create(Dog, {"id": 99})
            other.object_for_primary_key(Dog, 0).name = "renamed"
    assert len(dogs) == 5 and first.name == "dog0"
    db.refresh()
    assert len(dogs) == 6 and first.name == "renamed"


def test_iteration_is_stable_while_deleting(db):
    with db.write():
        for dog in db.objects(Dog):
            db.delete(dog)
    assert len(db.objects(Dog)) == 0


def test_deleting_results_of_another_handle_is_an_error(db_path, db):
    with coffer.open(db_path, schema=[Dog]) as other:
        with other.write():
            with pytest.raises(coffer.InvalidArgumentError, match="another database handle"):
                other.delete(db.objects(Dog))
