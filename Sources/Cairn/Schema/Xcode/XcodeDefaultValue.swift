import Foundation

/// An Xcode attribute's default as Core Data loads it: what the model compiler makes of the
/// text, or no default where it ends up with none, with a note whenever that differs from a
/// plain reading of the text.
enum XcodeDefaultValue: Equatable {
    /// No default, as written.
    case none
    /// The text, read as written.
    case value(Value)
    /// The text means this value once converted as the model compiler does (`YES` on a number is 1).
    case converted(Value, note: String)
    /// The model compiler leaves the attribute without a default: the text does not fit.
    case dropped(note: String)

    /// The default of an attribute of `type`, from its `defaultValueString` and, for a date,
    /// `defaultDateTimeInterval` (which the model compiler reads in preference to the text).
    static func read(text: String?, interval: String?, type: AttributeType, typeName: String) -> XcodeDefaultValue {
        if type == .date, let interval {
            if let value = XcodeAttributeType.value(interval, for: .date) { return .value(value) }
            return .dropped(note: "defaultDateTimeInterval \"\(interval)\" is not a number of seconds: the attribute has no default")
        }
        guard let text = text ?? interval else { return .none }
        switch type {
        case .composite, .undefined:
            return .dropped(note: "a \(typeName) attribute takes no default: \"\(text)\" is ignored")
        default:
            break
        }
        if let value = XcodeAttributeType.value(text, for: type) { return .value(value) }
        if let value = converted(text, type) {
            return .converted(
                value, note: "default \"\(text)\" is read as \(XcodeAttributeType.text(value)) (type \(typeName)), as Core Data's model compiler reads it")
        }
        return .dropped(note: "default \"\(text)\" is not a valid \(typeName): the attribute has no default, as in Core Data")
    }

    /// The value the model compiler makes of a text that is not the type's own form: `YES` and
    /// `NO` on a number (a Boolean attribute whose type was changed), and a date written as text.
    private static func converted(_ text: String, _ type: AttributeType) -> Value? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        switch type {
        case .integer16, .integer32, .integer64, .double, .float, .decimal:
            switch trimmed.uppercased() {
            case "YES", "TRUE": return XcodeAttributeType.value("1", for: type)
            case "NO", "FALSE": return XcodeAttributeType.value("0", for: type)
            default: return nil
            }
        case .boolean:
            // A number: 0 is NO, 1 is YES (Xcode writes `0.0` after a type change).
            guard let number = Double(trimmed), number == 0 || number == 1 else { return nil }
            return .boolean(number == 1)
        case .date:
            return dateText(trimmed).map(Value.date)
        default:
            return nil
        }
    }

    /// A date as older Xcode versions wrote it in `defaultValueString` (`2013-04-23 12:00:00
    /// +0000`, Foundation's description of a date), with or without the time or the zone (UTC).
    private static func dateText(_ text: String) -> Date? {
        for format in ["yyyy-MM-dd HH:mm:ss Z", "yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd HH:mm Z", "yyyy-MM-dd HH:mm", "yyyy-MM-dd"] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.calendar = Calendar(identifier: .gregorian)
            formatter.dateFormat = format
            formatter.isLenient = false
            if let date = formatter.date(from: text), date.timeIntervalSinceReferenceDate.isFinite { return date }
        }
        return nil
    }
}
