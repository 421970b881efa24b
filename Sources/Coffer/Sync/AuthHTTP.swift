// JSON requests to a coffer-sync service's authentication endpoints, over
// Foundation's URLSession (FoundationNetworking on Linux): awaited by the
// App and User calls, or waited for on the sync thread that refreshes a token.

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

enum AuthHTTP {
    /// How long one request may take.
    static let timeout: TimeInterval = 30

    /// POSTs `body` as JSON to `path` of `baseURL` and gives the answer's JSON
    /// object, or throws ``AuthError`` with the service's code and message.
    static func post(_ baseURL: URL, _ path: String, _ body: [String: String]) async throws(AuthError) -> [String: Any] {
        let request = makeRequest(baseURL, path, body)
        let outcome: Outcome = await withCheckedContinuation { continuation in
            send(request) { continuation.resume(returning: $0) }
        }
        return try decode(outcome, path, baseURL)
    }

    /// ``post(_:_:_:)`` for a thread that may block: the sync thread asking for
    /// a fresh token.
    static func postBlocking(_ baseURL: URL, _ path: String, _ body: [String: String]) throws(AuthError) -> [String: Any] {
        let done = DispatchSemaphore(value: 0)
        let result = LockedValue<Outcome?>(nil)
        send(makeRequest(baseURL, path, body)) { outcome in
            result.withLock { $0 = outcome }
            done.signal()
        }
        done.wait()
        return try decode(result.withLock { $0! }, path, baseURL)
    }

    /// What came back: the body and HTTP status, or why nothing did.
    private struct Outcome: Sendable {
        var data: Data?
        var status: Int
        var failure: String?
    }

    private static func makeRequest(_ baseURL: URL, _ path: String, _ body: [String: String]) -> URLRequest {
        var request = URLRequest(url: baseURL.appendingPathComponent(path), timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try? JSONSerialization.data(withJSONObject: body)
        return request
    }

    private static func send(_ request: URLRequest, _ completion: @escaping @Sendable (Outcome) -> Void) {
        URLSession.shared.dataTask(with: request) { data, response, error in
            if let error {
                completion(Outcome(data: nil, status: 0, failure: error.localizedDescription))
            } else {
                completion(Outcome(data: data, status: (response as? HTTPURLResponse)?.statusCode ?? 0, failure: nil))
            }
        }.resume()
    }

    private static func decode(_ outcome: Outcome, _ path: String, _ baseURL: URL) throws(AuthError) -> [String: Any] {
        if let failure = outcome.failure {
            throw AuthError(.unreachable, httpStatus: 0, "\(path): the service at \(baseURL.absoluteString) cannot be reached: \(failure)")
        }
        let object = outcome.data.flatMap { try? JSONSerialization.jsonObject(with: $0) } as? [String: Any]
        guard (200..<300).contains(outcome.status) else {
            let code = (object?["error"] as? String) ?? "http_error"
            let message = (object?["message"] as? String) ?? HTTPURLResponse.localizedString(forStatusCode: outcome.status)
            throw AuthError(AuthError.Code(rawValue: code), httpStatus: outcome.status, "\(path): \(message)")
        }
        guard let object else {
            throw AuthError(.badAnswer, httpStatus: outcome.status, "\(path): the service answered something other than a JSON object")
        }
        return object
    }

    /// The string `key` of an answer, or ``AuthError/Code/badAnswer`` naming it.
    static func string(_ answer: [String: Any], _ key: String, _ path: String) throws(AuthError) -> String {
        guard let value = answer[key] as? String else {
            throw AuthError(.badAnswer, httpStatus: 200, "\(path): the answer has no \"\(key)\"")
        }
        return value
    }

    /// The time `key` (seconds since 1970) of an answer.
    static func date(_ answer: [String: Any], _ key: String, _ path: String) throws(AuthError) -> Date {
        guard let seconds = (answer[key] as? NSNumber)?.doubleValue else {
            throw AuthError(.badAnswer, httpStatus: 200, "\(path): the answer has no \"\(key)\"")
        }
        return Date(timeIntervalSince1970: seconds)
    }
}
