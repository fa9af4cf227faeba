import SwiftDiagnostics
import SwiftSyntax

/// What `@Managed` reads of a class: its stored properties that persist (in declaration order),
/// those it leaves alone, and its `#Unique` and `#Index` lines.
struct ManagedClassSyntax {
    /// A property the store keeps.
    struct Persisted {
        /// The property's name.
        var name: String
        /// Its declared type, as written.
        var type: TypeSyntax
        /// Its place among the class's persisted properties.
        var ordinal: Int
        /// The arguments of its `@Attribute(…)`, as written (nil: none).
        var attributeArguments: LabeledExprListSyntax?
        /// The arguments of its `@Relationship(…)`, as written (nil: none).
        var relationshipArguments: LabeledExprListSyntax?
    }

    /// The class's name.
    var typeName: String
    /// The persisted properties, in order.
    var persisted: [Persisted] = []
    /// Stored properties the store does not keep (`@Transient`): each needs an initial value.
    var transient: [VariableDeclSyntax] = []
    /// The arguments of each `#Unique<T>(…)` line.
    var uniqueness: [LabeledExprListSyntax] = []
    /// The arguments of each `#Index<T>(…)` line.
    var indexes: [LabeledExprListSyntax] = []
    /// What is wrong with the class, to report.
    var problems: [Diagnostic] = []

    /// Reads a class declaration; a declaration that is not a final, non-generic class is a problem.
    init(_ declaration: some DeclGroupSyntax, node: AttributeSyntax) {
        guard let classDecl = declaration.as(ClassDeclSyntax.self) else {
            typeName = ""
            problems.append(ManagedDiagnostic.notAClass.diagnose(at: node))
            return
        }
        typeName = classDecl.name.text
        if classDecl.genericParameterClause != nil {
            problems.append(ManagedDiagnostic.generic.diagnose(at: classDecl.name))
        }
        if !classDecl.modifiers.contains(where: { $0.name.tokenKind == .keyword(.final) }) {
            problems.append(ManagedDiagnostic.notFinal.diagnose(at: classDecl.name))
        }
        for member in classDecl.memberBlock.members {
            if let expansion = member.decl.as(MacroExpansionDeclSyntax.self) {
                switch expansion.macroName.text {
                case "Unique": uniqueness.append(expansion.arguments)
                case "Index": indexes.append(expansion.arguments)
                default: break
                }
                continue
            }
            guard let variable = member.decl.as(VariableDeclSyntax.self) else { continue }
            read(variable)
        }
    }

    private mutating func read(_ variable: VariableDeclSyntax) {
        guard let role = Self.role(of: variable) else { return }
        switch role {
        case .transient:
            transient.append(variable)
            if variable.bindings.contains(where: { $0.initializer == nil }) {
                problems.append(ManagedDiagnostic.transientWithoutValue.diagnose(at: variable))
            }
        case .persisted:
            if variable.bindingSpecifier.tokenKind == .keyword(.let) {
                problems.append(ManagedDiagnostic.constant.diagnose(at: variable.bindingSpecifier))
                return
            }
            for binding in variable.bindings {
                guard let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.text else {
                    problems.append(ManagedDiagnostic.pattern.diagnose(at: binding.pattern))
                    continue
                }
                guard let type = binding.typeAnnotation?.type else {
                    problems.append(ManagedDiagnostic.untyped(name).diagnose(at: binding.pattern))
                    continue
                }
                if binding.accessorBlock != nil {
                    problems.append(ManagedDiagnostic.observers(name).diagnose(at: binding.pattern))
                    continue
                }
                persisted.append(
                    Persisted(
                        name: name, type: type.trimmed, ordinal: persisted.count,
                        attributeArguments: Self.arguments(of: "Attribute", in: variable.attributes),
                        relationshipArguments: Self.arguments(of: "Relationship", in: variable.attributes)))
            }
        }
    }

    enum Role { case persisted, transient }

    /// Whether a member is a persisted property, a transient stored one, or neither (nil: static,
    /// computed, lazy, or added by a macro).
    static func role(of variable: VariableDeclSyntax) -> Role? {
        guard isStored(variable),
            !variable.bindings.contains(where: { $0.pattern.as(IdentifierPatternSyntax.self)?.identifier.text.hasPrefix("_") == true })
        else { return nil }
        if hasAttribute("Transient", in: variable.attributes) || hasAttribute("ObservationIgnored", in: variable.attributes) {
            return .transient
        }
        return .persisted
    }

    /// Whether a member is a stored instance property: not static, class or lazy, and with no
    /// accessors but `willSet` and `didSet` (`@Managed`'s properties, `@Composite`'s elements).
    static func isStored(_ variable: VariableDeclSyntax) -> Bool {
        let skipped: [Keyword] = [.static, .class, .lazy]
        if variable.modifiers.contains(where: { modifier in skipped.contains { modifier.name.tokenKind == .keyword($0) } }) { return false }
        return !variable.bindings.contains { binding in binding.accessorBlock.map { !isObserversOnly($0) } ?? false }
    }

    private static func isObserversOnly(_ block: AccessorBlockSyntax) -> Bool {
        guard case .accessors(let accessors) = block.accessors else { return false }
        return accessors.allSatisfy { [.keyword(.willSet), .keyword(.didSet)].contains($0.accessorSpecifier.tokenKind) }
    }

    static func hasAttribute(_ name: String, in attributes: AttributeListSyntax) -> Bool {
        attributes.contains { element in
            guard case .attribute(let attribute) = element else { return false }
            return attribute.attributeName.trimmedDescription == name
                || attribute.attributeName.trimmedDescription.hasSuffix(".\(name)")
        }
    }

    private static func arguments(of name: String, in attributes: AttributeListSyntax) -> LabeledExprListSyntax? {
        for element in attributes {
            guard case .attribute(let attribute) = element else { continue }
            let written = attribute.attributeName.trimmedDescription
            guard written == name || written.hasSuffix(".\(name)") else { continue }
            if case .argumentList(let list) = attribute.arguments { return list }
            return LabeledExprListSyntax([])
        }
        return nil
    }
}
