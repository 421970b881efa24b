import pytest
from models_links import Address, Owner, Pet

import coffer


@pytest.fixture
def db(db_path):
    with coffer.open(db_path, schema=[Owner, Pet, Address]) as database:
        yield database


@pytest.fixture
def ann(db):
    with db.write():
        return db.create(Owner, {"name": "Ann", "lucky": [1, 2, 3], "nicknames": ["a", "b"], "scores": {"x": 1.0}})


def test_list_reads_like_a_python_list(ann):
    lucky = ann.lucky
    assert isinstance(lucky, coffer.List)
    assert len(lucky) == 3 and lucky[0] == 1 and lucky[-1] == 3
    assert lucky[1:] == [2, 3] and lucky[::-1] == [3, 2, 1]
    assert list(lucky) == [1, 2, 3] and lucky == [1, 2, 3] and lucky != [1]
    assert 2 in lucky and lucky.index(3) == 2 and lucky.count(1) == 1
    with pytest.raises(IndexError, match="index 3 is out of range"):
        lucky[3]
    with pytest.raises(IndexError):
        lucky[-4]
    with pytest.raises(ValueError):
        lucky.index(99)
    with pytest.raises(TypeError, match="integers or slices"):
        lucky["0"]


def test_list_writes_like_a_python_list(db, ann):
    lucky = ann.lucky
    with db.write():
        lucky.append(4)
        lucky.insert(0, 0)
        lucky.insert(-1, None)
        lucky.extend([5, 6])
        lucky[1] = 10
        del lucky[-1]
        assert lucky.pop() == 5
        lucky.remove(2)
    assert lucky == [0, 10, 3, None, 4]
    with db.write():
        lucky.move(0, 4)
        lucky.swap(0, 1)
    assert lucky == [3, 10, None, 4, 0]
    with db.write():
        lucky.extend(lucky)
    assert len(lucky) == 10
    with db.write():
        lucky.clear()
    assert lucky == [] and len(ann.lucky) == 0


def test_list_errors(db, ann):
    lucky = ann.lucky
    with pytest.raises(coffer.NotInWriteError):
        lucky.append(1)
    with pytest.raises(coffer.PropertyTypeError, match="class 'Owner', property 'lucky': expected int, got str"):
        with db.write():
            lucky.append("x")
    with pytest.raises(IndexError):
        with db.write():
            lucky[5] = 1
    with pytest.raises(TypeError, match="slice"):
        with db.write():
            lucky[0:1] = [1]
    with db.write():
        lucky.append(4)
        with pytest.raises(ValueError):
            lucky.remove(99)
    assert lucky == [1, 2, 3, 4]


def test_failed_writes_roll_back(db, ann):
    with pytest.raises(RuntimeError):
        with db.write():
            ann.lucky.append(9)
            ann.nicknames.add("z")
            ann.scores["y"] = 2.0
            raise RuntimeError("stop")
    assert ann.lucky == [1, 2, 3] and "z" not in ann.nicknames and "y" not in ann.scores


def test_assigning_a_collection_replaces_it(db, ann):
    handle = ann.lucky
    with db.write():
        ann.lucky = [7]
        ann.nicknames = {"q"}
        ann.scores = {"z": 3}
    assert handle == [7] and set(ann.nicknames) == {"q"} and ann.scores == {"z": 3.0}
    with pytest.raises(TypeError, match="expected a list"):
        with db.write():
            ann.lucky = 5
    with pytest.raises(TypeError, match="expected a dict"):
        with db.write():
            ann.scores = [1]


def test_set_behaves_like_a_python_set(db, ann):
    nicks = ann.nicknames
    assert isinstance(nicks, coffer.Set)
    assert len(nicks) == 2 and "a" in nicks and "z" not in nicks and 5 not in nicks
    assert nicks == {"a", "b"}
    assert nicks | {"z"} == {"a", "b", "z"} and nicks & {"a"} == {"a"} and nicks - {"a"} == {"b"}
    assert isinstance(nicks | {"z"}, set) and nicks.isdisjoint({"q"})
    with db.write():
        nicks.add("c")
        nicks.add("a")
        nicks.discard("zz")
        nicks.remove("b")
        with pytest.raises(KeyError):
            nicks.remove("b")
    assert set(nicks) == {"a", "c"}
    with db.write():
        nicks.update(["d", "e"])
        nicks |= {"f"}
        nicks &= {"a", "d", "e", "f", "zz"}
        nicks -= {"e"}
    assert set(nicks) == {"a", "d", "f"}
    with db.write():
        nicks.intersection_update(["a", "d"])
        nicks.difference_update(["d"])
    assert set(nicks) == {"a"}
    with pytest.raises(coffer.PropertyTypeError, match="nicknames"):
        with db.write():
            nicks.add(1)
    with db.write():
        nicks.clear()
    assert len(nicks) == 0


def test_set_operations_between_managed_sets(db):
    with db.write():
        ann = db.create(Owner, {"name": "Ann", "nicknames": ["a", "b", "c"]})
        bob = db.create(Owner, {"name": "Bob", "nicknames": ["b", "c", "d"]})
        ann.nicknames |= bob.nicknames
    assert set(ann.nicknames) == {"a", "b", "c", "d"}
    with db.write():
        ann.nicknames -= bob.nicknames
    assert set(ann.nicknames) == {"a"}
    with db.write():
        bob.nicknames &= ann.nicknames
    assert set(bob.nicknames) == set()


def test_map_behaves_like_a_dict(db, ann):
    scores = ann.scores
    assert isinstance(scores, coffer.Dictionary)
    assert scores["x"] == 1.0 and scores.get("y") is None and scores.get("y", 5) == 5
    assert "x" in scores and "y" not in scores and 1 not in scores
    with db.write():
        scores["b"] = 2
        scores["a"] = 0.5
        scores.update({"c": 3.0}, d=4.0)
        del scores["x"]
        assert scores.pop("d") == 4.0
        assert scores.pop("nope", None) is None
    assert list(scores) == ["a", "b", "c"] and scores.keys() == ["a", "b", "c"]
    assert scores.values() == [0.5, 2.0, 3.0] and scores.items() == [("a", 0.5), ("b", 2.0), ("c", 3.0)]
    assert len(scores) == 3 and scores == {"a": 0.5, "b": 2.0, "c": 3.0}
    with pytest.raises(KeyError):
        scores["x"]
    with pytest.raises(KeyError):
        with db.write():
            del scores["x"]
    with db.write():
        scores.clear()
    assert dict(scores) == {}


@pytest.mark.parametrize("key, error", [("", coffer.InvalidArgumentError), ("a.b", coffer.InvalidArgumentError),
                                        ("$a", coffer.InvalidArgumentError), (1, coffer.PropertyTypeError)])
def test_bad_map_keys_are_refused(db, ann, key, error):
    with pytest.raises(error, match="scores"):
        with db.write():
            ann.scores[key] = 1.0
    with pytest.raises(error, match="scores"):
        with db.write():
            db.create(Owner, {"name": "Bob", "scores": {key: 1.0}})
    assert ann.scores == {"x": 1.0} and len(db.objects(Owner)) == 1


def test_lists_of_links(db):
    with db.write():
        ann = db.create(Owner, {"name": "Ann"})
        rex = db.create(Pet, {"name": "Rex"})
        ann.pets.append(rex)
        ann.pets.append({"name": "Fido"})
        ann.pets.insert(0, rex)
    assert [p.name for p in ann.pets] == ["Rex", "Rex", "Fido"]
    assert ann.pets.count(rex) == 2 and rex in ann.pets
    with pytest.raises(coffer.PropertyTypeError):
        with db.write():
            ann.pets.append(None)


def test_collections_of_a_deleted_object(db, ann):
    lucky = ann.lucky
    with db.write():
        db.delete(ann)
    assert not lucky.is_valid
    with pytest.raises(coffer.InvalidObjectError):
        len(lucky)
    assert "deleted" in repr(lucky)


def test_collections_of_a_closed_database(db, ann):
    lucky = ann.lucky
    db.close()
    with pytest.raises(coffer.DatabaseClosedError):
        list(lucky)
