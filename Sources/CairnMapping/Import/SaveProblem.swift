import Cairn

extension MappingError {
    /// What the save would refuse in an object (a ``StoreError``: a required value missing, a
    /// relationship holding too few or too many objects), as an import error naming the record
    /// that left the object so, with a hint on what to change when there is one.
    init(saveProblem problem: StoreError, path: String, offset: Int?, hint: String? = nil) {
        self.init(
            Code(rawValue: problem.code.rawValue), problem.message + (hint.map { " (\($0))" } ?? ""), entity: problem.entity, property: problem.property,
            path: path, offset: offset)
    }
}

extension ImportWarning {
    /// A record a lenient import skips because the save would refuse what it left (see
    /// ``MappingError/init(saveProblem:path:offset:hint:)``); `also` says what else that leaves
    /// as it was.
    init(skipping path: String, saveProblem problem: StoreError, hint: String? = nil, also: String? = nil) {
        let error = MappingError(saveProblem: problem, path: path, offset: nil, hint: hint)
        self.init(path: path, message: error.message + "; record skipped" + (also.map { ", and \($0)" } ?? ""))
    }
}
