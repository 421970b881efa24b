// The models of Realm's documented projection example.

import Coffer
import Foundation

/// Realm's documented projection example: a person with an embedded address,
/// friends and reviews, and a projection that passes through, renames,
/// follows a key path, computes and maps a list.
enum Contacts {
    final class Person: Object {
        @Persisted var firstName = ""
        @Persisted var lastName = ""
        @Persisted var age = 0
        @Persisted var address: Address?
        @Persisted var friends: List<Person>
        @Persisted var reviews: List<String>
        @Persisted var clubs: MutableSet<Club>

        /// Projections and their queries use the Swift names.
        override class func propertiesMapping() -> [String: String] {
            ["firstName": "first_name"]
        }
    }

    final class Address: EmbeddedObject {
        @Persisted var city = ""
        @Persisted var country = ""
    }

    final class Club: Object {
        @Persisted var name = ""
        @Persisted(originProperty: "clubs") var members: LinkingObjects<Person>
    }

    static let types: [Object.Type] = [Person.self, Address.self, Club.self]
}

final class PersonProjection: Projection<Contacts.Person> {
    @Projected(\Contacts.Person.firstName) var firstName
    @Projected(\Contacts.Person.lastName.localizedUppercase) var lastNameCaps
    @Projected(\Contacts.Person.age) var years
    @Projected(\Contacts.Person.address?.city) var homeCity
    @Projected(\Contacts.Person.friends.projectTo.firstName) var firstFriendsName: ProjectedCollection<String>
    @Projected(\Contacts.Person.clubs.projectTo.name) var clubNames: ProjectedCollection<String>
    @Projected(\Contacts.Person.reviews) var reviews
}

final class ClubProjection: Projection<Contacts.Club> {
    @Projected(\Contacts.Club.name) var title
    @Projected(\Contacts.Club.members.projectTo.age) var memberAges: ProjectedCollection<Int>
}
