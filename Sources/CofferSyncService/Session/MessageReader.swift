// Reads a connection's WebSocket messages in a task of its own, ahead of the
// session that handles them. The WebSocket layer handles control frames
// (the client's pongs to the service's pings, its pings, close) only while
// messages are read, so a session that stopped reading while it integrates
// a long upload would miss the pongs, and the ping timeout would close a
// live connection. Reading ahead keeps the pongs flowing; an idle peer that
// answers no ping is still closed. Unread messages are bounded, in number
// and in bytes: beyond either bound the reader waits for the session.
import HummingbirdWebSocket

/// Messages read ahead of the session.
actor MessageBuffer {
    /// A message, the end of the stream (nil), or the failure to read.
    typealias Item = Result<WebSocketMessage?, any Error>

    private let limit: Int
    private let byteLimit: Int
    private var items: [Item] = []
    private var bytes = 0
    private var consumer: CheckedContinuation<Item, Never>?
    private var producer: CheckedContinuation<Void, Never>?
    private var closed = false

    init(limit: Int, byteLimit: Int) {
        self.limit = limit
        self.byteLimit = byteLimit
    }

    private static func size(_ item: Item) -> Int {
        switch item {
        case .success(.binary(let buffer)?): buffer.readableBytes
        case .success(.text(let text)?): text.utf8.count
        default: 0
        }
    }

    /// Adds `item`; waits while `limit` messages or `byteLimit` bytes are unread.
    func put(_ item: Item) async {
        guard !closed else { return }
        if let consumer {
            self.consumer = nil
            consumer.resume(returning: item)
            return
        }
        items.append(item)
        bytes += Self.size(item)
        if items.count >= limit || bytes >= byteLimit {
            await withCheckedContinuation { producer = $0 }
        }
    }

    /// The next item, waiting for it.
    func take() async -> Item {
        if !items.isEmpty {
            let item = items.removeFirst()
            bytes -= Self.size(item)
            if let producer {
                self.producer = nil
                producer.resume()
            }
            return item
        }
        if closed { return .success(nil) }
        return await withCheckedContinuation { consumer = $0 }
    }

    /// Drops what is unread and releases a waiting reader: the session ended.
    func close() {
        closed = true
        items.removeAll()
        bytes = 0
        producer?.resume()
        producer = nil
        consumer?.resume(returning: .success(nil))
        consumer = nil
    }
}

/// The reader task of one connection and the buffer it fills.
struct MessageReader: Sendable {
    /// Messages read ahead at most: enough for a client's upload and the
    /// acknowledgements of its downloads while an upload is integrated.
    static let defaultLimit = 64

    let buffer: MessageBuffer
    private let task: Task<Void, Never>

    /// Reads `inbound`'s messages of at most `maxSize` bytes; holds at most
    /// `limit` unread ones, and reads no more once `maxSize` bytes are unread.
    init(_ inbound: WebSocketInboundStream, maxSize: Int, limit: Int = defaultLimit) {
        let buffer = MessageBuffer(limit: limit, byteLimit: maxSize)
        self.buffer = buffer
        task = Task {
            var messages = inbound.messages(maxSize: maxSize).makeAsyncIterator()
            while !Task.isCancelled {
                do {
                    let message = try await messages.next()
                    await buffer.put(.success(message))
                    if message == nil { return }
                } catch {
                    await buffer.put(.failure(error))
                    return
                }
            }
        }
    }

    /// The next message, nil when the client closed the connection.
    func next() async throws -> WebSocketMessage? {
        try await buffer.take().get()
    }

    /// Stops reading: the session ended.
    func stop() {
        task.cancel()
        let buffer = self.buffer
        Task { await buffer.close() }
    }
}
