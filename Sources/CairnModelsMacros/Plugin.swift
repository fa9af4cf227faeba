import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plug-in of CairnModels' macros.
@main
struct CairnModelsPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [
        ManagedMacro.self,
        PersistedPropertyMacro.self,
        MarkerMacro.self,
        ConstraintMacro.self,
        CompositeMacro.self
    ]
}
