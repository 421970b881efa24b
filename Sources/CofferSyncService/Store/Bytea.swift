// Byte arrays in and out of PostgreSQL's bytea: PostgresNIO binds ByteBuffer
// as bytea, and these helpers keep [UInt8] (what the codec speaks) at the
// call sites.
import NIOCore
import PostgresNIO

extension Array where Element == UInt8 {
    /// The bytes as a bytea bind.
    var bytea: ByteBuffer { ByteBuffer(bytes: self) }
}

extension ByteBuffer {
    /// The readable bytes.
    var bytes: [UInt8] { getBytes(at: readerIndex, length: readableBytes) ?? [] }
}
