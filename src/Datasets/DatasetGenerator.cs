namespace Indexing.Datasets;

/// <summary>Generates the documents of a <see cref="DatasetSpec"/>: lazily, deterministically, in key order.</summary>
/// <remarks>
/// <para>
/// Streaming: each enumeration builds its vocabularies (a few hundred KiB) and one reused write
/// buffer, then makes one document per step. Memory stays bounded by the largest document however
/// long the dataset is; nothing is generated before it is asked for.
/// </para>
/// <para>
/// Deterministic: every random choice derives from the seed and the document's position, never
/// from the clock or earlier enumerations, so the same spec gives byte-identical documents on every
/// run and runtime. Each body is exactly its planned size (see <see cref="PlannedSizes"/>).
/// </para>
/// <para>
/// Documents are orders: <c>customer { id, name, city, tier }</c>, <c>status</c>, <c>createdAt</c>
/// (ISO 8601 UTC, rising with the key), <c>paid</c>, <c>tags[]</c>, <c>lines[] { product, quantity,
/// price }</c>, <c>lineCount</c>, <c>itemCount</c>, <c>total</c>, <c>notes</c> and <c>description</c>.
/// Names and text use made-up words from a seeded 20,000-word vocabulary with Zipf frequencies;
/// larger documents have more lines and a longer description.
/// </para>
/// </remarks>
public static class DatasetGenerator
{
    /// <summary>The documents of <paramref name="spec"/> in key order, made one at a time as enumerated.</summary>
    public static IEnumerable<GeneratedDocument> Generate(DatasetSpec spec)
    {
        ArgumentNullException.ThrowIfNull(spec);
        return Enumerate(spec);
    }

    /// <summary>
    /// The body size of every document <see cref="Generate"/> would make, in the same order, without
    /// writing bodies (a few nanoseconds each): for planning loads and checking shapes.
    /// </summary>
    public static IEnumerable<long> PlannedSizes(DatasetSpec spec)
    {
        ArgumentNullException.ThrowIfNull(spec);
        return EnumerateSizes(spec);
    }

    private static IEnumerable<GeneratedDocument> Enumerate(DatasetSpec spec)
    {
        using var composer = new OrderComposer(spec);
        var ids = new IdFormat(spec);
        foreach (var planned in SizePlan.Documents(spec))
        {
            yield return new GeneratedDocument(ids.Format(planned.Position), composer.Compose(planned.Position, planned.SizeBytes));
        }
    }

    private static IEnumerable<long> EnumerateSizes(DatasetSpec spec)
    {
        foreach (var planned in SizePlan.Documents(spec))
        {
            yield return planned.SizeBytes;
        }
    }
}
