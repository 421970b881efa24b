// CofferLibrary: facts about the linked C core, such as its version.

internal import CCoffer

/// Facts about the Coffer library linked into the program.
public enum CofferLibrary {
    /// The version of the C core, as `"MAJOR.MINOR.PATCH"`.
    ///
    /// This is the version of the library actually running, which
    /// `coffer_version()` reports, not the one the overlay was compiled against.
    ///
    /// ```swift
    /// print("Coffer \(CofferLibrary.version)")  // Coffer 0.1.0
    /// ```
    public static var version: String {
        String(cString: coffer_version())
    }
}
