// Tests of unmanaged objects: initial values, value initializers and the values
// they stop on.

import Coffer
import Foundation
import Testing

@Suite struct UnmanagedObjectTests {
    @Test func initialValuesAndDefaults() {
        let dog = Dog()
        #expect(dog.name == "")
        #expect(dog.breed == nil)
        #expect(dog._id != ObjectId(), "an ObjectId primary key is generated")
        #expect(dog._id == dog._id, "and stays the same")
        #expect(Dog()._id != dog._id)
        #expect(Book().price == 9.99)
        #expect(Task().statusEnum == .notStarted)
        #expect(dog.database == nil)
        #expect(!dog.isInvalidated)
        dog.name = "Rex"
        #expect(dog.name == "Rex")
    }

    @Test func initFromDictionary() {
        let dog = Dog(value: ["name": "Rex", "age": 3, "breed": "Beagle"])
        #expect(dog.name == "Rex")
        #expect(dog.age == 3)
        #expect(dog.breed == "Beagle")
        #expect(dog.color == "", "properties not given keep their initial values")

        let withNil = Dog(value: ["breed": Optional<String>.none as Any])
        #expect(withNil.breed == nil)
        let withNull = Dog(value: ["breed": NSNull()])
        #expect(withNull.breed == nil)

        let values = AllTypes(value: ["int8": 12, "float": 1.5, "double": 2, "priority": 10, "optPriority": Priority.medium,
                                      "decimal": "1.50", "data": [UInt8]([1, 2]), "optString": Optional("x") as Any])
        #expect(values.int8 == 12)
        #expect(values.float == 1.5)
        #expect(values.double == 2)
        #expect(values.priority == .high)
        #expect(values.optPriority == .medium)
        #expect(values.decimal.stringValue == "1.50")
        #expect(values.data == Data([1, 2]))
        #expect(values.optString == "x")
    }

    @Test func initFromArrayAndFromAnotherObject() {
        let id = ObjectId.generate()
        let dog = Dog(value: [id, "Rex", 3, "brown", "Paris", "Beagle"])
        #expect(dog._id == id)
        #expect(dog.currentCity == "Paris")
        let copy = Dog(value: dog)
        #expect(copy._id == id)
        #expect(copy.breed == "Beagle")
        #expect(copy !== dog)
    }

    @Test func unknownPropertyStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Dog(value: ["nmae": "Rex"])
        }
        #expect(errorOutput(result).contains("class 'Dog' has no property 'nmae'"))
    }

    @Test func wrongTypeStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Dog(value: ["age": "three"])
        }
        #expect(errorOutput(result).contains("property 'Dog.age' is int"))
    }

    @Test func integerOutOfRangeStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = AllTypes(value: ["int8": 300])
        }
        #expect(errorOutput(result).contains("AllTypes.int8"))
    }

    @Test func nilForARequiredPropertyStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Dog(value: ["name": NSNull()])
        }
        #expect(errorOutput(result).contains("'Dog.name' is required"))
    }

    @Test func arrayOfTheWrongLengthStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Dog(value: ["Rex"])
        }
        #expect(errorOutput(result).contains("has 6 properties, but the array given has 1"))
    }
}
