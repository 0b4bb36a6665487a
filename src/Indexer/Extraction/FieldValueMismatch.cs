namespace Indexing.Indexer;

/// <summary>A value a field could not take, skipped rather than failing the document.</summary>
/// <param name="Field">The field's name.</param>
/// <param name="Path">Where the value is in the document, with array positions: "lines[2].quantity".</param>
/// <param name="Reason">Why it was skipped, with the value and what the field takes.</param>
/// <remarks>
/// Like Elasticsearch's ignore_malformed: an indexer over a whole collection must not stop on
/// one odd document, so the value is left out, counted, and the latest one is shown in the
/// index's status for someone to fix the data or the definition.
/// </remarks>
internal sealed record FieldValueMismatch(string Field, string Path, string Reason)
{
    /// <inheritdoc/>
    public override string ToString() => $"field '{Field}' at {Path}: {Reason}";
}
