/// Where a record keeps its properties.
public enum RecordLayout: String, Sendable, Hashable {
    /// Each property under its key (a key path) in the record. The default.
    case plain
    /// A Django fixture's: `{"model": "app.album", "pk": 1, "fields": {"title": "…", "artist": 3}}`.
    /// An entity's unique key (of one attribute) is read from `pk`; every other property's key
    /// paths are read inside `fields` (a to-one relationship as the target's key, a to-many as
    /// an array of keys); `model` names the record's entity (``EntityDiscriminator/django``)
    /// unless the mapping gives another discriminator.
    case django
}
