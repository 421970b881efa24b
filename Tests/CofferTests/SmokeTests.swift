import Coffer
import Testing

@Test func smoke() throws {
    let dir = TemporaryDirectory()
    let db = try Database(configuration: configuration(.plain, [Dog.self], in: dir))
    let rex = Dog(value: ["name": "Rex", "age": 3])
    try db.write { try db.add(rex) }
    #expect(rex.name == "Rex")
    #expect(db.objects(Dog.self).count == 1)
    #expect(db.objects(Dog.self).first?.age == 3)
    try db.write { rex.age = 4 }
    #expect(db.objects(Dog.self)[0].age == 4)
}
