// Dates as ISO 8601 text in UTC with nanoseconds ("2024-02-29T12:00:00.5Z"),
// computed from the days of the proleptic Gregorian calendar, so that every
// stored date (any year, either sign of nanoseconds) reads back exactly.

import CCoffer

enum DateText {
    /// The text of a stored date. Coffer's nanoseconds have the sign of the
    /// seconds; the text counts them forward from the whole second before.
    static func format(_ t: coffer_timestamp) -> String {
        var seconds = t.seconds
        var nanos = Int64(t.nanoseconds)
        if nanos < 0 {
            seconds -= 1
            nanos += 1_000_000_000
        }
        let days = floorDiv(seconds, 86_400)
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        var text = year < 0 ? "-" + pad(-year, 4) : pad(year, 4)
        text += "-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2))"
        if nanos != 0 {
            var fraction = pad(nanos, 9)
            while fraction.hasSuffix("0") { fraction.removeLast() }
            text += "." + fraction
        }
        return text + "Z"
    }

    /// Parses what ``format(_:)`` writes (a fraction of 1 to 9 digits, "Z").
    static func parse(_ text: String) -> coffer_timestamp? {
        var chars = Substring(text)
        var negativeYear = false
        if chars.first == "-" {
            negativeYear = true
            chars = chars.dropFirst()
        }
        guard chars.hasSuffix("Z") else { return nil }
        chars = chars.dropLast()
        let parts = chars.split(separator: "T", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let date = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        guard date.count == 3, date[0].count >= 4, let y = Int64(date[0]), let m = Int64(date[1]), let d = Int64(date[2]),
              (1...12).contains(m), (1...31).contains(d) else { return nil }
        var time = parts[1]
        var nanos: Int64 = 0
        if let dot = time.firstIndex(of: ".") {
            let fraction = time[time.index(after: dot)...]
            guard (1...9).contains(fraction.count), fraction.allSatisfy(\.isASCII), let f = Int64(fraction) else { return nil }
            nanos = f * power10(9 - fraction.count)
            time = time[..<dot]
        }
        let hms = time.split(separator: ":", omittingEmptySubsequences: false)
        guard hms.count == 3, let h = Int64(hms[0]), let mi = Int64(hms[1]), let s = Int64(hms[2]),
              (0..<24).contains(h), (0..<60).contains(mi), (0..<60).contains(s) else { return nil }
        let days = daysFromCivil(year: negativeYear ? -y : y, month: m, day: d)
        let (daySeconds, o1) = days.multipliedReportingOverflow(by: 86_400)
        let (total, o2) = daySeconds.addingReportingOverflow(h * 3600 + mi * 60 + s)
        guard !o1, !o2 else { return nil }
        var seconds = total
        if seconds < 0 && nanos > 0 {
            seconds += 1
            nanos -= 1_000_000_000
        }
        return coffer_timestamp(seconds: seconds, nanoseconds: Int32(nanos))
    }

    private static func pad(_ n: Int64, _ width: Int) -> String {
        let s = String(n)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }

    private static func power10(_ n: Int) -> Int64 { (0..<n).reduce(1) { r, _ in r * 10 } }

    private static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        a >= 0 ? a / b : -((-a - 1) / b) - 1
    }

    // Howard Hinnant's days_from_civil and civil_from_days.
    private static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = floorDiv(y, 400)
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = floorDiv(z, 146_097)
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
