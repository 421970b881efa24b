// The to-do list's one class.

import Coffer
import Foundation

final class Todo: Object {
    @Persisted var title = ""
    @Persisted var done = false
    @Persisted var created = Date()
}
