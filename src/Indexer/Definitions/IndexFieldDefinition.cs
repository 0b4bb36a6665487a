namespace Indexing.Indexer;

/// <summary>One field of an index: where its values come from in a document and how they are indexed.</summary>
/// <param name="Name">
/// The field's name in the index and in queries: 1 to 64 characters from A-Z, a-z, 0-9, '_' and
/// '.', not starting with a digit or '.'; names starting with "__" are reserved for the fields the
/// indexer adds itself (document id, etag).
/// </param>
/// <param name="Path">Where the values are in a document, e.g. "customer.name" or "lines[].product".</param>
/// <param name="Type">How the values are read and indexed.</param>
/// <param name="Stored">Whether the values are kept in the index to be returned with results.</param>
/// <param name="Sortable">Whether results can be sorted by this field; not allowed on text fields.</param>
/// <remarks>
/// A bare value: it is checked when an <see cref="IndexDefinition"/> is built from it, not here,
/// so that every problem of a definition can be reported at once.
/// </remarks>
public sealed record IndexFieldDefinition(
    string Name, string Path, IndexFieldType Type, bool Stored = false, bool Sortable = false);
