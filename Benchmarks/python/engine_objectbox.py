"""ObjectBox through its Python package, with its defaults. ObjectBox assigns
ids itself (1, 2, ... in an empty box, never reused), so inserting the
objects in order gives them the workload's ids; the checks confirm it."""
import os

from objectbox import Bool, Bytes, Entity as ObxEntity, Float32, Float64, Id, Index, Int32, Int64, Store, String

from workload import Entity, Workload, check_add, check_ordered, each_found

PUT_LIMIT = 10_000


@ObxEntity()
class BoxEntity:
    id = Id()
    flag = Bool()
    i32 = Int32()
    i64 = Int64()
    f = Float32()
    d = Float64()
    text = String()
    blob = Bytes()
    group = Int64(index=Index())
    name = String(index=Index())


def _new(e: Entity) -> BoxEntity:
    # id 0: ObjectBox assigns the next id.
    return BoxEntity(flag=e.flag, i32=e.i32, i64=e.i64, f=e.f, d=e.d, text=e.text, blob=e.blob,
                     group=e.group, name=e.name)


def _entity(o: BoxEntity) -> Entity:
    return Entity(o.id, o.flag, o.i32, o.i64, o.f, o.d, o.text, bytes(o.blob), o.group, o.name)


class ObjectBoxEngine:
    def __init__(self, directory: str) -> None:
        self.store = Store(directory=os.path.join(directory, "objectbox"),
                           model_json_file=os.path.join(directory, "objectbox-model.json"))
        self.box = self.store.box(BoxEntity)

    def close(self) -> None:
        self.store.close()

    def insert_bulk(self, w: Workload) -> int:
        with self.store.write_tx():
            # One put takes at most 10,000 new objects (ObjectBox's limit).
            for start in range(0, w.n, PUT_LIMIT):
                self.box.put(*(_new(e) for e in w.entities[start:min(start + PUT_LIMIT, w.n)]))
        return self.box.count()

    def read_by_primary_key(self, w: Workload) -> int:
        check = 0
        with self.store.read_tx():
            for _, obj in each_found(w.order, self.box.get, "no object with id {id}"):
                check = check_add(check, _entity(obj))
        return check

    def update_all(self, w: Workload) -> int:
        updated = 0
        with self.store.write_tx():
            for id, obj in each_found(w.order, self.box.get, "no object with id {id} to update"):
                obj.i64, obj.d = w.updates[id]
                self.box.put(obj)
                updated += 1
        return updated

    def read_all_in_order(self, w: Workload) -> int:
        check = 0
        with self.store.read_tx():
            for position, obj in enumerate(self.box.get_all()):
                check = check_ordered(check, position, _entity(obj))
        return check

    def _counts(self, condition, prop, arguments: list) -> int:
        # One query built once, its parameter set for each run, as its
        # documentation recommends for repeated queries.
        total = 0
        with self.store.read_tx():
            query = self.box.query(condition).build()
            for argument in arguments:
                total += query.set_parameter(prop, argument).count()
            query.close()
        return total

    def indexed_equality_query(self, w: Workload) -> int:
        return self._counts(BoxEntity.group.equals(0), BoxEntity.group, w.query_groups)

    def unindexed_filter_scan(self, w: Workload) -> int:
        return self._counts(BoxEntity.i64.greater_than(0), BoxEntity.i64, w.scan_thresholds)

    def string_prefix_query(self, w: Workload) -> int:
        return self._counts(BoxEntity.name.starts_with(""), BoxEntity.name, w.prefixes)

    def delete_all(self, w: Workload) -> int:
        self.box.remove_all()
        return self.box.count()

    def single_object_write_transactions(self, w: Workload) -> int:
        for e in w.entities[w.n:]:
            with self.store.write_tx():
                self.box.put(_new(e))
        return self.box.count()
