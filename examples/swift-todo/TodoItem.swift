// The to-do list's one class.

import Coffer
import Foundation

final class TodoItem: Object {
    @Persisted var title = ""
    @Persisted var done = false
    @Persisted var created = Date()
}
