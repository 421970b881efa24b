// The C side of SyncConfiguration.errorHandler: a box the session's
// coffer_sync_error_fn reaches through its context, kept alive by the
// handle (SharedHandle) for as long as the session runs.

import Foundation
internal import CCoffer

/// Holds a sync configuration's error handler for the C callback.
final class SyncErrorBox: Sendable {
    let handler: @Sendable (SyncError) -> Void

    init(_ handler: @escaping @Sendable (SyncError) -> Void) {
        self.handler = handler
    }

    /// Sets the C callback on `config`; the box must outlive every handle
    /// opened with it.
    func install(on config: OpaquePointer) throws(CofferError) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        try CofferError.check(coffer_config_set_sync_error_callback(config, { ctx, event in
            guard let ctx, let event else { return }
            Unmanaged<SyncErrorBox>.fromOpaque(ctx).takeUnretainedValue().handler(SyncError(event.pointee))
        }, context))
    }
}

extension SyncError {
    /// The error of one ERROR frame the core reported.
    init(_ event: coffer_sync_error_event) {
        let name = event.code_name.map { String(cString: $0) } ?? "unknown"
        let message = event.message.map { String(cString: $0) } ?? ""
        var key: PrimaryKey?
        if let pk = event.primary_key?.pointee {
            switch pk.type {
            case COFFER_TYPE_INT: key = .int(pk.u.integer)
            case COFFER_TYPE_STRING:
                let bytes = UnsafeRawBufferPointer(start: pk.u.string.data, count: pk.u.string.size)
                key = .string(String(decoding: bytes, as: UTF8.self))
            case COFFER_TYPE_OBJECT_ID: key = .objectId(ObjectId(pk.u.object_id))
            case COFFER_TYPE_UUID: key = .uuid(UUID(uuid: pk.u.uuid.bytes))
            default: key = nil
            }
        }
        self.init(message: "\(name): \(message)", isFatal: event.fatal != 0, code: ServiceCode(rawValue: name),
                  className: event.class_name.map { String(cString: $0) }, primaryKey: key)
    }
}
