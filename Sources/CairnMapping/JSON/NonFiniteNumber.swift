import Cairn
import Foundation

/// The one spelling of the numbers JSON has no literal for: export writes a non-finite double
/// or float, and a decimal's NaN, as the strings `"NaN"`, `"Infinity"` and `"-Infinity"` (as
/// `JSONEncoder`'s `convertToString` strategy is usually set), and import reads the infinities
/// back into double and float attributes whatever the mapping's coercion. No attribute holds
/// NaN (it equals nothing, so it could be neither found nor ordered): import refuses it by name.
enum NonFiniteNumber {
    static let notANumber = "NaN"
    static let infinity = "Infinity"
    static let negativeInfinity = "-Infinity"

    /// The spelling of `number`, or nil when it is finite.
    static func spelling<Number: FloatingPoint>(_ number: Number) -> String? {
        if number.isNaN { return notANumber }
        if number.isInfinite { return number < 0 ? negativeInfinity : infinity }
        return nil
    }

    /// The value of `type` an infinity's spelling stands for, or nil when `text` is none (or
    /// `type` holds no infinity: a decimal, an integer).
    static func infinity(_ text: String, _ type: AttributeType) -> Value? {
        switch (text, type) {
        case (infinity, .double): .double(.infinity)
        case (negativeInfinity, .double): .double(-.infinity)
        case (infinity, .float): .float(.infinity)
        case (negativeInfinity, .float): .float(-.infinity)
        default: nil
        }
    }
}
