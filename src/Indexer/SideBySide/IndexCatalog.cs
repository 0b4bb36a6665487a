using System.Collections.Immutable;
using System.Text.Json;
using System.Text.Json.Serialization;

using Indexing.Storage;

namespace Indexing.Indexer;

/// <summary>
/// The persisted map from index name to its active generation, definition and rebuild intent:
/// <c>catalog.json</c> in the indexes root. Every change replaces the file whole through
/// <see cref="AtomicFile"/> (new file, fsync, rename, directory fsync), so a crash leaves either the
/// old catalog or the new one, never neither and never a mix.
/// </summary>
/// <remarks>Not thread-safe: the <see cref="IndexManager"/> serialises changes under its lock.</remarks>
internal sealed class IndexCatalog
{
    public const string FileName = "catalog.json";
    private const int FormatVersion = 1;

    private static readonly JsonSerializerOptions _json = new()
    {
        WriteIndented = true,
        PropertyNamingPolicy = JsonNamingPolicy.CamelCase,
        Converters = { new JsonStringEnumConverter(JsonNamingPolicy.KebabCaseLower) },
    };

    private readonly string _path;

    private IndexCatalog(string root, CatalogState state)
    {
        Root = root;
        _path = Path.Combine(root, FileName);
        State = state;
    }

    public string Root { get; }

    public CatalogState State { get; private set; }

    // The catalog is the one record of which directory serves each index: without it, every index
    // directory would look abandoned. So a missing catalog is only "no indexes yet" when the root
    // holds no index directories; otherwise, as for an unreadable one, opening is refused (naming the
    // file and what to do) and nothing is deleted.
    public static IndexCatalog Load(string root)
    {
        Directory.CreateDirectory(root);
        var path = Path.Combine(root, FileName);
        var shown = MessageText.QuotePath(path);
        // A temp file left by a crash before its rename is an abandoned change: the old file rules.
        File.Delete(AtomicFile.TempPath(path));
        if (!File.Exists(path))
        {
            var orphans = IndexDirectories(root);
            if (orphans.Count > 0)
            {
                throw new InvalidDataException(
                    $"the index catalog {shown} is missing, but {MessageText.QuotePath(root)} holds index directories ({string.Join(", ", orphans.Select(MessageText.Quote))}); " +
                    "without the catalog nothing says which generation serves. Restore catalog.json from a backup; or, to start without these indexes, move their directories out of the root (nothing was deleted).");
            }

            return new IndexCatalog(root, new CatalogState(FormatVersion, ImmutableSortedDictionary<string, CatalogEntry>.Empty.WithComparers(StringComparer.Ordinal)));
        }

        CatalogState? state;
        try
        {
            state = JsonSerializer.Deserialize<CatalogState>(File.ReadAllBytes(path), _json);
        }
        catch (JsonException e)
        {
            throw new InvalidDataException(
                $"the index catalog {shown} is not valid JSON ({e.Message}); it is only ever replaced whole, so something else wrote it. Restore it from a backup, or move it and the index directories out of the root to start without indexes (nothing was deleted).", e);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new InvalidDataException($"the index catalog {shown} cannot be read ({e.Message}); fix its permissions or the disk, then start again (nothing was deleted).", e);
        }

        if (state is null || state.Version != FormatVersion || state.Indexes is null)
        {
            throw new InvalidDataException(
                $"the index catalog {shown} has format version {state?.Version.ToString(System.Globalization.CultureInfo.InvariantCulture) ?? "(none)"}; this build reads version {FormatVersion}.");
        }

        return new IndexCatalog(root, state with { Indexes = state.Indexes.WithComparers(StringComparer.Ordinal) });
    }

    // Generation directories are named g000001, g000002, ...
    public static bool IsGenerationDirectoryName(string name) =>
        name.Length == 7 && name[0] == 'g' && name.AsSpan(1).IndexOfAnyExceptInRange('0', '9') < 0;

    // Directories under the root that hold at least one generation directory.
    private static List<string> IndexDirectories(string root) =>
        [.. Directory.EnumerateDirectories(root)
            .Where(d => Directory.EnumerateDirectories(d).Any(g => IsGenerationDirectoryName(Path.GetFileName(g))))
            .Select(d => Path.GetFileName(d))
            .Order(StringComparer.Ordinal)];

    public string GenerationDirectory(string name, int generation) => Path.Combine(Root, name, $"g{generation:D6}");

    // beforeStep: a test seam, called before each step of the file's replacement (AtomicFile).
    // State is what the file on disk says: it changes once the new file is renamed into place, also
    // when the rename then could not be made durable (FileReplacedNotDurableException, rethrown).
    // Otherwise the next change would be made from a state the file no longer holds, and could undo
    // this one, or name a generation that was deleted meanwhile.
    public void Save(CatalogState state, Action<AtomicFileStep, string>? beforeStep = null)
    {
        try
        {
            AtomicFile.Replace(_path, stream => JsonSerializer.Serialize(stream, state, _json), beforeStep);
        }
        catch (FileReplacedNotDurableException)
        {
            State = state;
            throw;
        }

        State = state;
    }

    // Changes one index's entry; State changes only once the new file is in place.
    public void Update(string name, Func<CatalogEntry?, CatalogEntry?> change, Action<AtomicFileStep, string>? beforeStep = null)
    {
        var current = State.Indexes.GetValueOrDefault(name);
        var next = change(current);
        var indexes = next is null ? State.Indexes.Remove(name) : State.Indexes.SetItem(name, next);
        Save(State with { Indexes = indexes }, beforeStep);
    }

    // Makes the last change durable (fsync of the root): what must hold before deleting a
    // generation the previous catalog named.
    public void SyncDirectory() => AtomicFile.SyncDirectoryOf(_path);

    // Generation directories (gNNNNNN) of catalogued indexes that the catalog names neither as
    // serving nor as a rebuild's replacement: left by a crash after a switch or during a cancel.
    // Nothing else under the root is touched, whatever it is. On open, before any index is opened.
    public void DeleteUnreferencedGenerations()
    {
        foreach (var (name, entry) in State.Indexes)
        {
            var indexDirectory = Path.Combine(Root, name);
            if (!Directory.Exists(indexDirectory))
            {
                continue;
            }

            foreach (var generationDirectory in Directory.EnumerateDirectories(indexDirectory))
            {
                var generation = Path.GetFileName(generationDirectory);
                var keep = !IndexCatalog.IsGenerationDirectoryName(generation)
                    || generation == Path.GetFileName(GenerationDirectory(name, entry.ActiveGeneration))
                    || (entry.Rebuild is { } intent && generation == Path.GetFileName(GenerationDirectory(name, intent.Generation)));
                if (!keep)
                {
                    Directory.Delete(generationDirectory, recursive: true);
                }
            }
        }
    }

    // Index directories of names the catalog does not hold: left by a delete that was interrupted
    // after its catalog write (IndexManager.Delete.cs). Only a directory that holds generation
    // directories (what IndexCatalog.Load counts as an index directory), or nothing at all (the
    // delete got that far), is taken; nothing else under the root is touched. The catalog was
    // loaded, so it exists: a missing one with index directories was refused before this.
    public void DeleteUnreferencedDirectories()
    {
        foreach (var directory in Directory.EnumerateDirectories(Root))
        {
            var name = Path.GetFileName(directory);
            if (State.Indexes.ContainsKey(name))
            {
                continue;
            }

            var entries = Directory.GetFileSystemEntries(directory);
            if (entries.Length == 0 || entries.Any(entry => Directory.Exists(entry) && IndexCatalog.IsGenerationDirectoryName(Path.GetFileName(entry))))
            {
                Directory.Delete(directory, recursive: true);
            }
        }
    }
}

/// <summary>The whole catalog as persisted.</summary>
internal sealed record CatalogState(int Version, ImmutableSortedDictionary<string, CatalogEntry> Indexes);

/// <summary>
/// One index: the definition and generation that serve (generation 0: none yet), the rebuild in
/// progress if any (its intent survives restarts), and how the last rebuild ended.
/// </summary>
internal sealed record CatalogEntry(string DefinitionJson, int ActiveGeneration, RebuildIntent? Rebuild, RebuildSummary? LastRebuild);

/// <summary>A rebuild in progress: the generation it builds, with which definition, since when, and its phase.</summary>
internal sealed record RebuildIntent(int Generation, string DefinitionJson, DateTimeOffset StartedAt, RebuildPhase Phase, string Reason);
