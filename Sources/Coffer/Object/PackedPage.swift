// PackedPage: the stored values of many objects read by one C call
// (coffer_results_pack) into one buffer in the packed layout of coffer.h
// ("Batch reads and writes"), and each property read back from it when a
// getter asks, with no C call and no bridging of the other properties.

internal import CCoffer

/// A page of objects' packed values. It answers for the transaction and the
/// content version it was read in; after any write, refresh or new
/// transaction the objects read through the C core again. Strings are
/// borrowed from the database in a read transaction of a plain file (valid
/// until that transaction ends, which also makes the page stale) and copied
/// into the page otherwise; a `String` is made only when its property is read.
final class PackedPage {
    private let buffer: UnsafeMutableRawPointer
    private let rowSize: Int
    private let rowCount: Int
    /// ``Database/transactionSerial`` and ``Database/contentVersion`` when read.
    private let serial: UInt64
    private let version: UInt64
    let binding: ClassBinding

    private static let headerSize = MemoryLayout<coffer_pack_header>.size
    private static let rowHeadSize = MemoryLayout<coffer_pack_row>.size
    private static let valueSize = MemoryLayout<coffer_pack_value>.size

    private init(buffer: UnsafeMutableRawPointer, rowCount: Int, binding: ClassBinding, database: Database) {
        self.buffer = buffer
        self.rowCount = rowCount
        self.binding = binding
        rowSize = Self.rowHeadSize + Self.valueSize * binding.packedPropertyIds.count
        serial = database.transactionSerial
        version = database.contentVersion
    }

    deinit {
        buffer.deallocate()
    }

    /// Positions `start ..< start + count` of C results made in the database's
    /// current transaction, in one C call (two when the first guess of the
    /// size of their strings was short).
    static func read(_ results: OpaquePointer, start: Int, count: Int, binding: ClassBinding,
                     database: Database) throws(CofferError) -> PackedPage {
        let ids = binding.packedPropertyIds
        let fixed = headerSize + count * (rowHeadSize + valueSize * ids.count)
        var capacity = fixed + count * binding.packedBytesPerRow
        var needed = 0
        for _ in 0..<2 {
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: max(capacity, headerSize), alignment: 8)
            let status = ids.withUnsafeBufferPointer {
                coffer_results_pack(results, UInt64(start), count, $0.baseAddress, $0.count,
                                    Int32(COFFER_PACK_BORROW), buffer, capacity, &needed)
            }
            if status == COFFER_OK {
                if count > 0 {
                    binding.packedBytesPerRow = max(16, (needed - fixed) / count + 16)
                }
                return PackedPage(buffer: buffer, rowCount: count, binding: binding, database: database)
            }
            buffer.deallocate()
            guard status == COFFER_ERR_BUFFER_TOO_SMALL else {
                try CofferError.check(status)
                break
            }
            capacity = needed
        }
        throw CofferError(.internal, "coffer_results_pack asked for \(needed) bytes twice")
    }

    /// Whether the database is still in the state the page was read in.
    func isCurrent(in database: Database) -> Bool {
        database.transactionSerial == serial && database.contentVersion == version
    }

    private func row(_ row: Int) -> UnsafeMutableRawPointer {
        precondition(row >= 0 && row < rowCount, "Coffer: row \(row) of a page of \(rowCount)")
        return buffer + Self.headerSize + row * rowSize
    }

    /// False for an object deleted after the results were computed.
    func exists(row: Int) -> Bool {
        (self.row(row) + 8).load(as: UInt32.self) & UInt32(COFFER_PACK_ROW_DELETED) == 0
    }

    /// Property `index` of the class (in the binding's order) of the object of
    /// `row`; nil where the C core reads it (a collection, a property not
    /// stored, a link, which needs the transaction).
    func storedValue(row: Int, index: Int) -> StoredValue? {
        let slot = binding.packedSlots[index]
        guard slot >= 0 else { return nil }
        let packed = (self.row(row) + Self.rowHeadSize + slot * Self.valueSize).load(as: coffer_pack_value.self)
        var value = coffer_value()
        value.type = coffer_type(packed.type)
        switch value.type {
        case COFFER_TYPE_NULL: return .null
        case COFFER_TYPE_BOOL: value.u.boolean = packed.u.boolean != 0
        case COFFER_TYPE_INT: value.u.integer = packed.u.integer
        case COFFER_TYPE_FLOAT: value.u.float_value = packed.u.float_value
        case COFFER_TYPE_DOUBLE: value.u.double_value = packed.u.double_value
        case COFFER_TYPE_STRING, COFFER_TYPE_BINARY:
            let borrowed = buffer.load(as: coffer_pack_header.self).flags & UInt16(COFFER_PACK_BORROW) != 0
            let address = borrowed ? UnsafeRawPointer(bitPattern: UInt(packed.u.bytes.ref))
                                   : UnsafeRawPointer(buffer + Int(packed.u.bytes.ref))
            value.u.string = coffer_bytes(data: address, size: Int(packed.u.bytes.size))
        case COFFER_TYPE_DATE:
            value.u.date = coffer_timestamp(seconds: packed.u.integer, nanoseconds: Int32(bitPattern: packed.extra))
        case COFFER_TYPE_OBJECT_ID:
            value.u.object_id = packed.objectId
        case COFFER_TYPE_UUID: value.u.uuid = packed.uuid
        case COFFER_TYPE_DECIMAL128:
            value.u.decimal128 = coffer_decimal128(w: (packed.u.words.0, packed.u.words.1))
        default: return nil
        }
        return StoredValue(copying: value)
    }
}

private extension coffer_pack_value {
    var objectId: coffer_object_id {
        var id = coffer_object_id()
        withUnsafeBytes(of: u.raw) { raw in
            withUnsafeMutableBytes(of: &id) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: raw.prefix(12))) }
        }
        return id
    }

    var uuid: coffer_uuid {
        var id = coffer_uuid()
        withUnsafeBytes(of: u.raw) { raw in
            withUnsafeMutableBytes(of: &id) { $0.copyMemory(from: raw) }
        }
        return id
    }
}
