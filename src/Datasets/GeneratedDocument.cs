namespace Indexing.Datasets;

/// <summary>One generated document: its id and its UTF-8 JSON body (a fresh array the caller may keep).</summary>
/// <param name="Id">"collection/NNNNNNNN", zero-padded so key order is generation order.</param>
/// <param name="Utf8Json">The body: one compact JSON object, no line breaks.</param>
public readonly record struct GeneratedDocument(string Id, byte[] Utf8Json)
{
    /// <summary>Size of the body in bytes.</summary>
    public long SizeBytes => Utf8Json.Length;
}
