using System.Globalization;

using Indexing.Storage;

namespace Indexing.Indexer;

// What a commit records about the index, as the engine's commit user data (string pairs).
//
// Etag: every change of the store up to it is in the commit; a reopened index follows the change
// feed from there. During a bulk build it keeps the value from before the build (0 for a new
// index) and BuildSnapshotEtag holds the snapshot S being built: a commit taken mid-build is
// incomplete. BuildIndexedThrough (only with BuildSnapshotEtag) is the build's "indexed through"
// key: every document of the snapshot with an id at or below it (UTF-8 key order) is in the commit,
// so a resumed build reads only the ids after it (DocumentIndex.Build.cs); null when no prefix of
// the build was complete yet, and then the build starts over. BuildIndexedCount (only with the key)
// is how many documents with an id at or below the key the build had added when the commit began:
// a commit holding fewer lost some to a failed write (DocumentIndex.Build.cs says how that can
// happen), and its key must not be resumed after. Commits made before it existed carry none.
internal readonly record struct IndexCheckpoint(long Etag, string DefinitionHash, long? BuildSnapshotEtag, string? BuildIndexedThrough = null, long? BuildIndexedCount = null)
{
    public const int FormatVersion = 1;

    private const string FormatKey = "indexer.format";
    private const string EtagKey = "indexer.etag";
    private const string HashKey = "indexer.definitionHash";
    private const string BuildKey = "indexer.buildSnapshotEtag";
    private const string ThroughKey = "indexer.buildIndexedThrough";
    private const string CountKey = "indexer.buildIndexedCount";

    public Dictionary<string, string> ToUserData()
    {
        var data = new Dictionary<string, string>(4, StringComparer.Ordinal)
        {
            [FormatKey] = FormatVersion.ToString(CultureInfo.InvariantCulture),
            [EtagKey] = Etag.ToString(CultureInfo.InvariantCulture),
            [HashKey] = DefinitionHash,
        };
        if (BuildSnapshotEtag is { } snapshot)
        {
            data[BuildKey] = snapshot.ToString(CultureInfo.InvariantCulture);
            if (BuildIndexedThrough is { } through)
            {
                data[ThroughKey] = through;
                if (BuildIndexedCount is { } count)
                {
                    data[CountKey] = count.ToString(CultureInfo.InvariantCulture);
                }
            }
        }

        return data;
    }

    /// <summary>Reads a commit's user data; null when it has none of ours (a new, empty index).</summary>
    /// <exception cref="InvalidDataException">The data is ours but unreadable or of an unknown format.</exception>
    public static IndexCheckpoint? FromUserData(IDictionary<string, string>? data)
    {
        if (data is null || !data.TryGetValue(FormatKey, out var format))
        {
            return null;
        }

        if (format != FormatVersion.ToString(CultureInfo.InvariantCulture))
        {
            throw new InvalidDataException(
                $"the last commit's checkpoint has format {MessageText.Quote(format)}; this indexer reads format {FormatVersion}. Rebuild the index.");
        }

        var etag = ReadLong(data, EtagKey) ?? throw Missing(EtagKey);
        var hash = data.TryGetValue(HashKey, out var h) ? h : throw Missing(HashKey);
        var build = ReadLong(data, BuildKey);
        // A key without a build is meaningless (and never written): ignore it.
        var through = build is not null && data.TryGetValue(ThroughKey, out var key) ? key : null;
        var count = through is not null ? ReadLong(data, CountKey) : null;
        return new IndexCheckpoint(etag, hash, build, through, count);
    }

    private static long? ReadLong(IDictionary<string, string> data, string key)
    {
        if (!data.TryGetValue(key, out var text))
        {
            return null;
        }

        return long.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out var value) && value >= 0
            ? value
            : throw new InvalidDataException($"the last commit's {key} is {MessageText.Quote(text)}; it must be a non-negative integer. Rebuild the index.");
    }

    private static InvalidDataException Missing(string key) =>
        new($"the last commit's checkpoint lacks {key}; the commit data is damaged. Rebuild the index.");
}
