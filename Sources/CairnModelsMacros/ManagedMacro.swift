import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@Managed`: makes a final class a typed model of Cairn.
///
/// - Each stored `var` (not `@Transient`) becomes a persisted property: `_PersistedProperty`
///   gives it accessors that read and write the object's values in its context (or, before the
///   object is inserted, values of its own), and a zero-sized peer that makes initializers set it.
/// - The class gets its state, its observation registrar's slot (the registrar is made when a
///   property is first read), `init(managedState:)` (how Cairn makes
///   fetched objects), and `managedSchema`: each persisted property by name and key path with
///   what `@Attribute`, `@Relationship`, `#Unique` and `#Index` say.
/// - An extension makes it `ManagedModel` and `Observable`.
public struct ManagedMacro: MemberMacro, MemberAttributeMacro, ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax, conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        let syntax = ManagedClassSyntax(declaration, node: node)
        guard syntax.problems.isEmpty else {
            syntax.problems.forEach(context.diagnose)
            return []
        }
        let type = syntax.typeName
        let slots = syntax.persisted.map { "self._\(unescaped($0.name)) = CairnModels.ManagedSlot()" }.joined(separator: "\n")
        let properties = syntax.persisted.map { property -> String in
            var arguments = ["\(literal(unescaped(property.name)))", "\\\(type).\(property.name)", "ordinal: \(property.ordinal)"]
            if let attribute = property.attributeArguments { arguments.append("attribute: CairnModels.AttributeOptions(\(attribute.trimmedDescription))") }
            if let relationship = property.relationshipArguments {
                arguments.append("relationship: CairnModels.RelationshipOptions(\(relationship.trimmedDescription))")
            }
            return "CairnModels.ManagedProperty(\(arguments.joined(separator: ", ")))"
        }
        let uniqueness = syntax.uniqueness.flatMap { $0.map(\.expression.trimmedDescription) }
        let indexes = syntax.indexes.flatMap { $0.map(\.expression.trimmedDescription) }
        // (Nobody observes an object that no getter has read: it has no registrar yet.)
        let changed = syntax.persisted.map { "registrar.willSet(self, keyPath: \\.\($0.name))" }
        let notified = syntax.persisted.map { "registrar.didSet(self, keyPath: \\.\($0.name))" }
        let notifying =
            changed.isEmpty ? "" : (["guard let registrar = _$observation.existing?.registrar else { return }"] + changed + notified).joined(separator: "\n")
        return [
            // (Unchecked: an object stays in its context's isolation, and reading a property
            // must not pay for a dynamic exclusivity check.)
            "@exclusivity(unchecked) public var _managedState = CairnModels.ManagedState(propertyCount: \(raw: syntax.persisted.count))",
            "private let _$observation = CairnModels.ObservationSlot()",
            """
            /// Makes the object of a fetch: its values are read from `managedState`'s context.
            public init(managedState: CairnModels.ManagedState) {
                self._managedState = managedState
                \(raw: slots)
            }
            """,
            """
            /// The class's persisted properties and constraints, from which Cairn derives its entity.
            public static let managedSchema = CairnModels.ManagedSchema(
                \(raw: type).self,
                properties: [\(raw: properties.joined(separator: ",\n"))],
                uniqueness: [\(raw: uniqueness.joined(separator: ", "))] as [[PartialKeyPath<\(raw: type)>]],
                indexes: [\(raw: indexes.joined(separator: ", "))] as [[PartialKeyPath<\(raw: type)>]]
            )
            """,
            """
            /// Tells observers that every persisted property may have changed (a save merged).
            public func _managedPropertiesChanged() {
                \(raw: notifying)
            }
            """
        ]
    }

    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax, providingAttributesFor member: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AttributeSyntax] {
        guard let variable = member.as(VariableDeclSyntax.self), ManagedClassSyntax.role(of: variable) == .persisted,
            variable.bindingSpecifier.tokenKind == .keyword(.var), variable.bindings.count == 1,
            let binding = variable.bindings.first, binding.accessorBlock == nil, binding.typeAnnotation != nil,
            let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.text
        else { return [] }
        let syntax = ManagedClassSyntax(declaration, node: node)
        guard syntax.problems.isEmpty, let property = syntax.persisted.first(where: { $0.name == name }) else { return [] }
        return ["@_PersistedProperty(\(raw: property.ordinal))"]
    }

    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax, providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard declaration.is(ClassDeclSyntax.self) else { return [] }
        let decl: DeclSyntax = "extension \(type.trimmed): CairnModels.ManagedModel, Observation.Observable {}"
        return decl.as(ExtensionDeclSyntax.self).map { [$0] } ?? []
    }
}

/// A name as written in code, without the backticks that let a keyword be one (`` `default` ``):
/// the attribute's name, and the stored peer's (`_default`).
func unescaped(_ name: String) -> String {
    name.count > 2 && name.hasPrefix("`") && name.hasSuffix("`") ? String(name.dropFirst().dropLast()) : name
}

/// A Swift string literal of `text`.
func literal(_ text: String) -> String {
    StringLiteralExprSyntax(content: text).trimmedDescription
}

/// `_PersistedProperty(n)`: the accessors of the n-th persisted property of a `@Managed` class,
/// and the zero-sized stored peer (`_name`) that makes every initializer set the property.
public struct PersistedPropertyMacro: AccessorMacro, PeerMacro {
    public static func expansion(
        of node: AttributeSyntax, providingAccessorsOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        guard let (name, ordinal) = property(node, declaration) else { return [] }
        return [
            """
            @storageRestrictions(initializes: _\(raw: unescaped(name)), accesses: _managedState)
            init(initialValue) {
                _managedState.initialize(\(raw: ordinal), to: initialValue)
                _\(raw: unescaped(name)) = CairnModels.ManagedSlot()
            }
            """,
            """
            get {
                _$observation.access(self, keyPath: \\.\(raw: name))
                return CairnModels.ManagedState.value(\(raw: ordinal), of: self)
            }
            """,
            """
            set {
                guard let observation = _$observation.existing else { return CairnModels.ManagedState.setValue(newValue, \(raw: ordinal), of: self) }
                observation.registrar.withMutation(of: self, keyPath: \\.\(raw: name)) {
                    CairnModels.ManagedState.setValue(newValue, \(raw: ordinal), of: self)
                }
            }
            """
        ]
    }

    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let (name, _) = property(node, declaration) else { return [] }
        return ["private var _\(raw: unescaped(name)): CairnModels.ManagedSlot"]
    }

    private static func property(_ node: AttributeSyntax, _ declaration: some DeclSyntaxProtocol) -> (String, Int)? {
        guard let variable = declaration.as(VariableDeclSyntax.self), let binding = variable.bindings.first,
            let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.text,
            case .argumentList(let arguments) = node.arguments, let first = arguments.first,
            let ordinal = first.expression.as(IntegerLiteralExprSyntax.self).flatMap({ Int($0.literal.text) })
        else { return nil }
        return (name, ordinal)
    }
}
