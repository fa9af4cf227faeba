import SwiftDiagnostics
import SwiftSyntax

/// What `@Managed` and `@Composite` refuse, each with a message that says what to write instead.
enum ManagedDiagnostic: DiagnosticMessage {
    case notAClass
    case notFinal
    case generic
    case constant
    case pattern
    case untyped(String)
    case observers(String)
    case transientWithoutValue
    case compositeNotAStruct
    case compositeGeneric
    case compositeEmpty
    case compositePattern
    case compositeConditional

    var message: String {
        switch self {
        case .notAClass: "@Managed applies to a final class"
        case .notFinal: "a @Managed class must be final (its objects are made by Cairn when it fetches them)"
        case .generic: "a @Managed class cannot be generic: each class is one entity"
        case .constant: "a stored 'let' cannot be persisted: write 'var', or mark it @Transient"
        case .pattern: "declare one persisted property per name (no tuple patterns)"
        case .untyped(let name): "the persisted property '\(name)' needs a type annotation ('var \(name): String')"
        case .observers(let name): "the persisted property '\(name)' cannot have willSet or didSet: observe it with Observation instead"
        case .transientWithoutValue: "a @Transient property needs an initial value (Cairn makes fetched objects without calling your initializers)"
        case .compositeNotAStruct: "@Composite applies to a struct"
        case .compositeGeneric: "a @Composite struct cannot be generic, nor be declared in a generic type: it is one composite type of the model"
        case .compositeEmpty: "a @Composite struct needs a stored property: each is an element of the composite"
        case .compositePattern: "declare one element per name (no tuple patterns)"
        case .compositeConditional: "declare a @Composite struct's elements outside #if: the model's composite type cannot vary"
        }
    }

    var diagnosticID: MessageID { MessageID(domain: "CairnModels", id: String(describing: self).prefix { $0 != "(" }.description) }
    var severity: DiagnosticSeverity { .error }

    func diagnose(at node: some SyntaxProtocol) -> Diagnostic { Diagnostic(node: Syntax(node), message: self) }
}

/// An error that ends an expansion after its diagnostics were reported.
struct DiagnosticsReported: Error {}
