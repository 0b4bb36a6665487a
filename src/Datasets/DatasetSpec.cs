using System.Globalization;
using System.Text;

using Indexing.Storage;

namespace Indexing.Datasets;

/// <summary>What to generate: shape, how much, seed, collection, size cap. Validated when built.</summary>
/// <remarks>
/// <para>
/// How much: give <see cref="DocumentCount"/>, <see cref="TargetTotalBytes"/>, or both, and
/// generation stops at whichever is reached first. The total counts document bodies only, and
/// it is "reached" by the document that brings it to at least the target, so a bytes-bounded
/// dataset overshoots by less than one document.
/// </para>
/// <para>
/// Shapes that depend on the position in key order (<see cref="DatasetShape.Growing"/>) are laid
/// over <see cref="PlannedDocumentCount"/>: the document count when given, else the count the
/// shape's expected mean size suggests for the byte target. With both limits the shape spans the
/// count and the byte target only cuts it short. With bytes alone, the real total can fall short
/// of the estimate; generation then goes on past it, continuing the shape's trend.
/// </para>
/// <para>
/// Only the constructor sets values, so an instance that exists is valid. Sizes use binary units:
/// "4 KiB" is 4,096 bytes.
/// </para>
/// </remarks>
public sealed class DatasetSpec
{
    /// <summary>Default <see cref="Seed"/>.</summary>
    public const int DefaultSeed = 42;

    /// <summary>Default <see cref="Collection"/>.</summary>
    public const string DefaultCollection = "orders";

    /// <summary>Default <see cref="MaxDocumentBytes"/>: 32 MiB, half the store's default 64 MiB limit.</summary>
    public const long DefaultMaxDocumentBytes = StoreOptions.DefaultMaxDocumentBytes / 2;

    /// <summary>
    /// Smallest document the generator writes: 512 B. Smaller targets are raised to it, since an
    /// order with its customer, one line and the totals already takes about 400 bytes.
    /// </summary>
    public const long MinDocumentBytes = 512;

    /// <summary>Smallest allowed <see cref="MaxDocumentBytes"/>: 1 KiB (the store's own floor).</summary>
    public const long MaxDocumentBytesFloor = StoreOptions.MaxDocumentBytesFloor;

    /// <summary>Largest allowed <see cref="MaxDocumentBytes"/>: 1 GiB (the store's own ceiling).</summary>
    public const long MaxDocumentBytesCeiling = StoreOptions.MaxDocumentBytesCeiling;

    /// <summary>Largest allowed <see cref="DocumentCount"/>: 10^12, so ids keep at most 12 digits.</summary>
    public const long MaxDocumentCount = 1_000_000_000_000;

    /// <summary>Longest allowed <see cref="Collection"/> name, in characters.</summary>
    public const int MaxCollectionLength = 64;

    // Ids are zero-padded to at least this many digits, so small datasets get "orders/00000001".
    private const int MinIdDigits = 8;

    /// <summary>Builds a spec, throwing <see cref="ArgumentException"/> (or a subclass) for a bad value.</summary>
    /// <param name="shape">How sizes are spread over the key order.</param>
    /// <param name="documentCount">Stop after this many documents (1 to 10^12); null for no count limit.</param>
    /// <param name="targetTotalBytes">Stop once the bodies total at least this many bytes; null for no byte limit.</param>
    /// <param name="seed">Same seed and settings give byte-identical documents.</param>
    /// <param name="collection">Collection part of every id: letters, digits, '-' and '_', 1 to 64 characters.</param>
    /// <param name="maxDocumentBytes">No document is larger; shapes clamp to it. 1 KiB to 1 GiB.</param>
    public DatasetSpec(
        DatasetShape shape,
        long? documentCount = null,
        long? targetTotalBytes = null,
        int seed = DefaultSeed,
        string collection = DefaultCollection,
        long maxDocumentBytes = DefaultMaxDocumentBytes)
    {
        if (!Enum.IsDefined(shape))
        {
            throw new ArgumentOutOfRangeException(
                nameof(shape), shape, $"dataset shape {(int)shape} is not defined; use one of: {string.Join(", ", DatasetShapeNames.All)}.");
        }

        if (documentCount is null && targetTotalBytes is null)
        {
            throw new ArgumentException(
                "a dataset spec needs documentCount, targetTotalBytes or both, or generation would never stop; " +
                "e.g. documentCount: 20000 or targetTotalBytes: 512 MiB.",
                nameof(documentCount));
        }

        if (documentCount is { } count && count is < 1 or > MaxDocumentCount)
        {
            throw new ArgumentOutOfRangeException(
                nameof(documentCount), count, $"documentCount is {count}; it must be from 1 to {MaxDocumentCount:0} (or null for no count limit).");
        }

        if (targetTotalBytes is { } bytes && bytes < 1)
        {
            throw new ArgumentOutOfRangeException(
                nameof(targetTotalBytes), bytes, $"targetTotalBytes is {bytes}; it must be at least 1 byte (or null for no byte limit).");
        }

        if (maxDocumentBytes is < MaxDocumentBytesFloor or > MaxDocumentBytesCeiling)
        {
            throw new ArgumentOutOfRangeException(
                nameof(maxDocumentBytes), maxDocumentBytes,
                $"maxDocumentBytes is {maxDocumentBytes} ({ByteSize.Format(maxDocumentBytes)}); it must be from " +
                $"{ByteSize.Format(MaxDocumentBytesFloor)} to {ByteSize.Format(MaxDocumentBytesCeiling)}. " +
                $"Keep it at or below the store's limit ({ByteSize.Format(StoreOptions.DefaultMaxDocumentBytes)} by default); the default is {ByteSize.Format(DefaultMaxDocumentBytes)}.");
        }

        CheckCollection(collection);

        Shape = shape;
        DocumentCount = documentCount;
        TargetTotalBytes = targetTotalBytes;
        Seed = seed;
        Collection = collection;
        MaxDocumentBytes = maxDocumentBytes;
        PlannedDocumentCount = documentCount ?? EstimateCount(shape, targetTotalBytes!.Value);
        IdDigits = Math.Max(MinIdDigits, DigitCount(documentCount ?? MostDocumentsFor(targetTotalBytes!.Value)));
    }

    /// <summary>How sizes are spread over the key order.</summary>
    public DatasetShape Shape { get; }

    /// <summary>Stop after this many documents; null when only <see cref="TargetTotalBytes"/> limits the dataset.</summary>
    public long? DocumentCount { get; }

    /// <summary>Stop once the bodies total at least this many bytes; null when only <see cref="DocumentCount"/> limits it.</summary>
    public long? TargetTotalBytes { get; }

    /// <summary>Seed of every random choice; the same spec always gives byte-identical documents.</summary>
    public int Seed { get; }

    /// <summary>Collection part of every id ("orders" in "orders/00000001").</summary>
    public string Collection { get; }

    /// <summary>No generated document is larger than this many bytes.</summary>
    public long MaxDocumentBytes { get; }

    /// <summary>The count that position-dependent shapes are laid over (see the remarks on the class).</summary>
    public long PlannedDocumentCount { get; }

    // Width of the zero-padded number in ids: enough for the most documents this spec can yield,
    // so key order (ordinal bytes) equals generation order across the whole dataset.
    internal int IdDigits { get; }

    /// <summary>The effective settings, e.g. "rare-giants, 20000 docs, seed 42, collection orders, max document 32 MiB".</summary>
    public override string ToString()
    {
        var text = new StringBuilder(Shape.ToName()).Append(", ");
        if (DocumentCount is { } count)
        {
            text.Append(CultureInfo.InvariantCulture, $"{count} docs");
        }

        if (TargetTotalBytes is { } bytes)
        {
            text.Append(DocumentCount is null
                ? string.Create(CultureInfo.InvariantCulture, $"{ByteSize.Format(bytes)} (about {PlannedDocumentCount} docs)")
                : $" or {ByteSize.Format(bytes)}, whichever first");
        }

        return text.Append(CultureInfo.InvariantCulture, $", seed {Seed}, collection {Collection}, max document {ByteSize.Format(MaxDocumentBytes)}")
            .ToString();
    }

    // Expected mean document size of the shape, for turning a byte target into a planned count.
    private static long EstimateCount(DatasetShape shape, long targetTotalBytes)
    {
        var mean = SizePlan.ExpectedMeanBytes(shape);
        return Math.Clamp((long)Math.Ceiling(targetTotalBytes / mean), 1, MaxDocumentCount);
    }

    private static long MostDocumentsFor(long targetTotalBytes) =>
        Math.Min(MaxDocumentCount, (targetTotalBytes / MinDocumentBytes) + 1);

    private static int DigitCount(long value) => value.ToString(CultureInfo.InvariantCulture).Length;

    private static void CheckCollection(string collection)
    {
        ArgumentNullException.ThrowIfNull(collection);
        var valid = collection.Length is > 0 and <= MaxCollectionLength;
        foreach (var c in collection)
        {
            valid &= char.IsAsciiLetterOrDigit(c) || c is '-' or '_';
        }

        if (!valid)
        {
            throw new ArgumentException(
                $"collection {MessageText.Quote(collection)} is not a valid generated collection name; use 1 to {MaxCollectionLength} ASCII letters, " +
                "digits, '-' or '_' (e.g. 'orders'), so every generated id is valid in the store.",
                nameof(collection));
        }
    }
}
