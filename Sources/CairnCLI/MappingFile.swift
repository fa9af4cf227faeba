import ArgumentParser
import Cairn
import CairnMapping
import Foundation

/// The mapping of `cairn import` and `cairn export`: the file `--mapping` names, else the
/// model's userInfo and default keys. An entity the model lacks, or a mapping that does not fit
/// it, is wrong usage (exit status 2). (nil `entity`: records name their own.)
func commandMapping(_ file: String?, model: Model, entity: String?) throws -> Mapping {
    if let entity, model.entity(named: entity) == nil {
        throw ValidationError("the model has no entity \(entity) (it has \(model.entities.map(\.name).joined(separator: ", ")))")
    }
    do {
        return try file.map { try Mapping(model: model, contentsOf: URL(fileURLWithPath: $0)) } ?? Mapping(model: model)
    } catch {
        throw ValidationError("\(error)")
    }
}
