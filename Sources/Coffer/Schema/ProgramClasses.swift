// ProgramClasses: finding every Object subclass of the running program, as
// Realm does for a configuration without objectTypes, from the Swift type
// metadata records the compiler emits for every nominal type.

@_spi(Reflection) import Swift
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The ``Object`` subclasses of the running program and its loaded libraries.
///
/// The Swift compiler emits a type metadata record (section `swift5_types`)
/// for every nominal type, and the runtime keeps the sections of every loaded
/// image; `swift_enumerateAllMetadataSections`, the runtime's entry point that
/// Swift Testing also uses to find tests, walks them. Each record leads to a
/// type context descriptor; for a non-generic class, its metadata accessor
/// gives the class, kept if it is a subclass of ``Object``. Generic classes
/// (which cannot be stored) and root classes are skipped. Where the
/// runtime lacks the entry point the list is empty, and a class must be
/// listed in ``Database/Configuration/objectTypes``.
enum ProgramClasses {
    /// Every non-generic subclass of ``Object`` (and ``EmbeddedObject``), found once.
    static let all: [Object.Type] = discover()

    /// Where `swift_enumerateAllMetadataSections` and `MetadataSections` are
    /// declared: swift/include/swift/Runtime/ImageInspectionCommon.h. The
    /// section ranges follow four words (version, base address, two unused).
    private typealias SectionVisitor = @convention(c) (UnsafeRawPointer?, UnsafeMutableRawPointer?) -> Bool
    private typealias EnumerateSections = @convention(c) (SectionVisitor, UnsafeMutableRawPointer?) -> Void
    private typealias MetadataAccessor = @convention(c) (Int) -> UnsafeRawPointer?

    /// Offset of the `swift5_types` range (start, length) in `MetadataSections`:
    /// after the four header words and the protocol and conformance ranges.
    private static let typesRangeOffset = 8 * MemoryLayout<UInt>.size

    /// Context descriptor kind of classes, and the flag of generic contexts.
    private static let classKind: UInt32 = 16
    private static let genericFlag: UInt32 = 0x80

    private final class Found {
        var classes: [Object.Type] = []
        /// Classes declaring a required link (`@Persisted var owner: Person`),
        /// whose instances cannot be made: making one stops the program.
        /// Superclasses are checked too, as subclasses inherit their fields.
        var declaresRequiredLink = Set<ObjectIdentifier>()
    }

    private static func discover() -> [Object.Type] {
        // RTLD_DEFAULT: every loaded image, in load order.
        #if canImport(Darwin)
        let everyImage = UnsafeMutableRawPointer(bitPattern: -2)
        #else
        let everyImage: UnsafeMutableRawPointer? = nil
        #endif
        guard let symbol = dlsym(everyImage, "swift_enumerateAllMetadataSections") else {
            return []
        }
        let found = Found()
        let enumerate = unsafeBitCast(symbol, to: EnumerateSections.self)
        withExtendedLifetime(found) {
            enumerate({ sections, context in
                guard let sections, let context else { return true }
                let found = Unmanaged<Found>.fromOpaque(context).takeUnretainedValue()
                ProgramClasses.visit(sections, into: found)
                return true
            }, Unmanaged.passUnretained(found).toOpaque())
        }
        // A class inherits its superclasses' properties, and so their required links.
        return found.classes.filter { type in
            var current: AnyClass? = type
            while let checked = current {
                if found.declaresRequiredLink.contains(ObjectIdentifier(checked)) { return false }
                current = _getSuperclass(checked)
            }
            return true
        }
    }

    private static func visit(_ sections: UnsafeRawPointer, into found: Found) {
        let version = sections.load(as: UInt.self)
        guard version >= 1 else { return }
        let start = sections.load(fromByteOffset: typesRangeOffset, as: UInt.self)
        let length = sections.load(fromByteOffset: typesRangeOffset + MemoryLayout<UInt>.size, as: UInt.self)
        guard start != 0, length > 0, let records = UnsafeRawPointer(bitPattern: start) else { return }
        for index in 0..<Int(length) / 4 {
            let record = records + index * 4
            guard let descriptor = contextDescriptor(at: record),
                  let type = objectSubclass(of: descriptor) else { continue }
            found.classes.append(type)
            if declaresRequiredLink(type) {
                found.declaresRequiredLink.insert(ObjectIdentifier(type))
            }
        }
    }

    /// The context descriptor a type metadata record points to (directly or
    /// through an indirection), nil for Objective-C records.
    private static func contextDescriptor(at record: UnsafeRawPointer) -> UnsafeRawPointer? {
        let relative = record.load(as: Int32.self)
        let kind = relative & 3
        let target = record + Int(relative & ~3)
        switch kind {
        case 0: return target
        case 1: return target.load(as: UnsafeRawPointer?.self)
        default: return nil
        }
    }

    /// `_EachFieldOptions.classType`, as ``ObjectLayout`` reads it.
    private static let classFields = _EachFieldOptions(rawValue: 1 << 0)

    /// True if a stored property of `type` is `Persisted<V>` with `V` an
    /// ``Object`` class, not optional: read from the runtime's field list of
    /// the class, without making an instance. A class whose fields cannot be
    /// listed counts as having one, so that it is not instantiated.
    private static func declaresRequiredLink(_ type: Object.Type) -> Bool {
        var found = false
        let listed = _forEachField(of: type, options: classFields) { _, _, fieldType, _ in
            if let wrapper = fieldType as? any RequiredLinkDescribing.Type, wrapper.holdsRequiredLink {
                found = true
                return false
            }
            return true
        }
        return found || !listed
    }

    /// The class of `descriptor` if it is a non-generic subclass of ``Object``.
    private static func objectSubclass(of descriptor: UnsafeRawPointer) -> Object.Type? {
        let flags = descriptor.load(as: UInt32.self)
        guard flags & 0x1F == classKind, flags & genericFlag == 0 else { return nil }
        // Root classes (no superclass) cannot be Object subclasses.
        guard descriptor.load(fromByteOffset: 20, as: Int32.self) != 0 else { return nil }
        let accessorOffset = descriptor.load(fromByteOffset: 12, as: Int32.self)
        guard accessorOffset != 0 else { return nil }
        let accessor = unsafeBitCast(descriptor + 12 + Int(accessorOffset), to: MetadataAccessor.self)
        guard let metadata = accessor(0) else { return nil }
        let type = unsafeBitCast(metadata, to: Any.Type.self)
        guard let objectType = type as? Object.Type,
              objectType != Object.self, objectType != EmbeddedObject.self else { return nil }
        return objectType
    }
}

/// Says whether a `@Persisted` property's storage holds a required link.
protocol RequiredLinkDescribing {
    static var holdsRequiredLink: Bool { get }
}

extension Persisted: RequiredLinkDescribing {
    static var holdsRequiredLink: Bool { Value.self is Object.Type }
}
