"""Runs the README's Python block on links, collections, mixed values and backlinks."""
# readme: python-links

with coffer.open("pets.coffer", schema=[Owner, Pet, Address]) as db:
    ann = db.object_for_primary_key(Owner, "Ann")
    assert ann.tags == {"friendly"} and ann.scores["speed"] == 9.5, (ann.tags, ann.scores)
    assert ann.address.street == "Main" and ann.best.name == "Rex"
