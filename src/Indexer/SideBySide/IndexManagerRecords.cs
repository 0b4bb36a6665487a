namespace Indexing.Indexer;

/// <summary>What <see cref="IndexManager.CreateOrUpdate"/> did.</summary>
public enum IndexPutResult
{
    /// <summary>A new index; it is being built and serves partial results meanwhile.</summary>
    Created,

    /// <summary>The same definition was already in use; nothing changed.</summary>
    Unchanged,

    /// <summary>The definition changed: a side-by-side rebuild started; the old definition serves until the swap.</summary>
    RebuildStarted,

    /// <summary>A rebuild to this very definition is already running.</summary>
    RebuildRunning,
}

/// <summary>An index as an operator reads it.</summary>
/// <param name="Name">Its name.</param>
/// <param name="Collection">The collection it indexes.</param>
/// <param name="Generation">The generation serving queries.</param>
/// <param name="DefinitionHash">Hash of the serving definition.</param>
/// <param name="Status">The serving generation's state, checkpoint, failures and metrics.</param>
/// <param name="LagEtags">The store's last etag minus what the serving generation has applied.</param>
/// <param name="Rebuild">The rebuild in progress or just finished, if any.</param>
/// <param name="LastRebuild">How the last rebuild ended, as persisted.</param>
public sealed record IndexSummary(
    string Name,
    string Collection,
    int Generation,
    string DefinitionHash,
    IndexStatus Status,
    long LagEtags,
    RebuildProgress? Rebuild,
    RebuildSummary? LastRebuild);

/// <summary>How a finished rebuild ended (persisted in the catalog).</summary>
/// <param name="Generation">The replacement generation it built.</param>
/// <param name="Phase">Done, Failed or Cancelled.</param>
/// <param name="StartedAt">When it started.</param>
/// <param name="EndedAt">When it ended.</param>
/// <param name="Error">Why it failed.</param>
/// <param name="Note">What an operator should know about a rebuild that did not fail, e.g. an old generation whose cleanup failed (its directory is deleted at the next start).</param>
public sealed record RebuildSummary(int Generation, RebuildPhase Phase, DateTimeOffset StartedAt, DateTimeOffset EndedAt, string? Error, string? Note = null);

// Index names as lookups see them (URLs, commands): the definition's name rule, so '..', '/',
// empty and the like are refused before they can reach a path.
internal static class IndexNames
{
    public static void Validate(string? name)
    {
        if (!IndexDefinition.IsValidName(name, out var problem))
        {
            throw new ArgumentException(problem, nameof(name));
        }
    }
}
