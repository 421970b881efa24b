// The C side of SyncConfiguration.errorHandler and clientResetMode: a box
// the session's coffer_sync_error_fn and coffer_client_reset_fn reach
// through their context, kept alive by the handle (SharedHandle) for as long
// as the session runs.

import Foundation
internal import CCoffer

/// Holds a sync configuration's error handler and client reset mode for the
/// C callbacks.
final class SyncCallbacks: Sendable {
    let errorHandler: (@Sendable (SyncError) -> Void)?
    let clientResetMode: ClientResetMode

    init(errorHandler: (@Sendable (SyncError) -> Void)?, clientResetMode: ClientResetMode) {
        self.errorHandler = errorHandler
        self.clientResetMode = clientResetMode
    }

    /// Sets the C callbacks on `config`; the box must outlive every handle
    /// opened with it.
    func install(on config: OpaquePointer) throws(CofferError) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        if errorHandler != nil {
            try CofferError.check(coffer_config_set_sync_error_callback(config, { ctx, event in
                guard let ctx, let event else { return }
                Unmanaged<SyncCallbacks>.fromOpaque(ctx).takeUnretainedValue().errorHandler?(SyncError(event.pointee))
            }, context))
        }
        try CofferError.check(coffer_config_set_sync_client_reset(config, clientResetMode.cMode, { ctx, _, after in
            guard let ctx else { return }
            let callbacks = Unmanaged<SyncCallbacks>.fromOpaque(ctx).takeUnretainedValue().clientResetMode.callbacks
            (after != 0 ? callbacks.after : callbacks.before)?()
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
