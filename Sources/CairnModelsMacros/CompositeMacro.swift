import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@Composite`: makes a struct a composite attribute's type (``CompositeAttribute``).
///
/// Each stored property is an element (a `let` with an initial value is not: it cannot be set).
/// The extension lists the elements by name and key path, and adds `init(compositeValues:)`,
/// which sets each element from its stored value.
public struct CompositeMacro: ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax, providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard let structDecl = declaration.as(StructDeclSyntax.self) else {
            context.diagnose(ManagedDiagnostic.compositeNotAStruct.diagnose(at: node))
            return []
        }
        if structDecl.genericParameterClause != nil {
            context.diagnose(ManagedDiagnostic.compositeGeneric.diagnose(at: structDecl.name))
            return []
        }
        // A static stored property (the element list) cannot live in a generic context.
        if context.lexicalContext.contains(where: { Self.isGeneric($0) }) {
            context.diagnose(ManagedDiagnostic.compositeGeneric.diagnose(at: structDecl.name))
            return []
        }
        /// Each element: its name as code (`` `default` ``) and as the attribute's (`default`).
        var elements: [(code: String, name: String)] = []
        for member in structDecl.memberBlock.members {
            if member.decl.is(IfConfigDeclSyntax.self) {
                context.diagnose(ManagedDiagnostic.compositeConditional.diagnose(at: member.decl))
                return []
            }
            guard let variable = member.decl.as(VariableDeclSyntax.self), ManagedClassSyntax.isStored(variable) else { continue }
            for binding in variable.bindings {
                // (A constant with a value is not stored per value: nothing to set.)
                if variable.bindingSpecifier.tokenKind == .keyword(.let), binding.initializer != nil { continue }
                guard let token = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier else {
                    context.diagnose(ManagedDiagnostic.compositePattern.diagnose(at: binding.pattern))
                    return []
                }
                elements.append((token.text, unescaped(token.text)))
            }
        }
        guard !elements.isEmpty else {
            context.diagnose(ManagedDiagnostic.compositeEmpty.diagnose(at: structDecl.name))
            return []
        }
        let typeName = type.trimmedDescription
        let access = structDecl.modifiers.contains { [.keyword(.public), .keyword(.package)].contains($0.name.tokenKind) } ? "public " : ""
        let listed = elements.map { "CairnModels.CompositeElement(\(literal($0.name)), \\\(typeName).\($0.code))" }
        let assigned = elements.enumerated().map { "self.\($1.code) = try compositeValues.value(\($0))" }
        let decl: DeclSyntax = """
            extension \(type.trimmed): CairnModels.CompositeAttribute {
                /// The struct's elements, in declaration order.
                \(raw: access)static let compositeElements: [CairnModels.CompositeElement] = [
                    \(raw: listed.joined(separator: ",\n"))
                ]
                /// Makes a value of its elements' stored values.
                \(raw: access)init(compositeValues: CairnModels.CompositeValues) throws {
                    \(raw: assigned.joined(separator: "\n"))
                }
            }
            """
        return decl.as(ExtensionDeclSyntax.self).map { [$0] } ?? []
    }

    /// Whether a declaration around the struct has generic parameters.
    private static func isGeneric(_ syntax: Syntax) -> Bool {
        if let decl = syntax.as(StructDeclSyntax.self) { return decl.genericParameterClause != nil }
        if let decl = syntax.as(ClassDeclSyntax.self) { return decl.genericParameterClause != nil }
        if let decl = syntax.as(EnumDeclSyntax.self) { return decl.genericParameterClause != nil }
        if let decl = syntax.as(FunctionDeclSyntax.self) { return decl.genericParameterClause != nil }
        return false
    }
}
