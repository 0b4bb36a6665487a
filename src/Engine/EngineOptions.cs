using Indexing.Indexer;
using Indexing.Storage;
using Microsoft.Extensions.Options;

namespace Indexing.Engine;

/// <summary>
/// Everything an <see cref="IndexingEngine"/> opens with, as one tree fixed at open. Each branch's property
/// name is also its configuration section, and messages name a setting by its path in the tree
/// (<c>Storage:MaxDocumentBytes</c>, <c>Indexes:IndexingThreads</c>), so a host that binds the sections
/// of the same names shows refusals that name what the operator wrote. <see cref="EngineOptionsValidator"/>
/// holds every rule; <see cref="IndexingEngine.Open"/> runs it once. Live limits of a running rebuild
/// are not here: they change through <see cref="IndexingEngine.UpdateRebuildLimits"/>.
/// </summary>
public sealed record EngineOptions
{
    /// <summary>How messages name <see cref="DataDirectory"/>.</summary>
    public const string DataDirectoryName = "DataDirectory";

    /// <summary>How messages name <see cref="Rebuilds"/>' settings: section <c>Rebuilds</c>.</summary>
    public const string RebuildsPrefix = "Rebuilds:";

    /// <summary>The folder the engine owns: the store in <c>store/</c>, the catalog and the Lucene indexes in <c>indexes/</c>. Created when missing.</summary>
    public required string DataDirectory { get; init; }

    /// <summary>The document store (section <c>Storage</c>).</summary>
    public StoreOptions Storage { get; init; } = StoreOptions.Default;

    /// <summary>What every index is opened with: indexing threads, commit cadence, refresh (section <c>Indexes</c>).</summary>
    public IndexOptions Indexes { get; init; } = new();

    /// <summary>How side-by-side rebuilds end (section <c>Rebuilds</c>).</summary>
    public RebuildOptions Rebuilds { get; init; } = new();

    /// <summary>Where the store lives: <c>&lt;DataDirectory&gt;/store</c>.</summary>
    public string StoreDirectory => Path.Combine(DataDirectory, "store");

    /// <summary>Where the index catalog and the Lucene indexes live: <c>&lt;DataDirectory&gt;/indexes</c>.</summary>
    public string IndexesDirectory => Path.Combine(DataDirectory, "indexes");

    /// <summary>The effective configuration, for a host's start-up log line.</summary>
    public override string ToString() =>
        $"data {DataDirectory}; store: {Storage}; indexes: {Indexes}; rebuilds: swap within {Rebuilds.SwapLagEtags} etags, drain up to {Rebuilds.DrainTimeout.TotalSeconds:0.###} s";
}

/// <summary>How side-by-side rebuilds end; part of <see cref="EngineOptions"/>.</summary>
public sealed record RebuildOptions
{
    /// <summary>
    /// The catch-up phase ends, and the swap begins, once the replacement is at most this many etags
    /// behind the store: the swap then applies the rest while the old generation still serves.
    /// </summary>
    public long SwapLagEtags { get; init; } = 1000;

    /// <summary>
    /// Longest wait for queries still running on a generation that is being replaced, deleted or closed;
    /// after it, the generation closes when its last query ends.
    /// </summary>
    public TimeSpan DrainTimeout { get; init; } = TimeSpan.FromSeconds(30);
}

/// <summary>
/// Every rule of <see cref="EngineOptions"/>, each problem naming its setting by its path in the tree, its
/// value and its range; all problems at once. The one validator of the tree: the store's and the
/// indexes' own rules are included, not repeated, and a host registers this one (ValidateOnStart).
/// </summary>
public sealed class EngineOptionsValidator : IValidateOptions<EngineOptions>
{
    /// <inheritdoc/>
    public ValidateOptionsResult Validate(string? name, EngineOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var problems = new OptionProblems();
        problems.Require(!string.IsNullOrWhiteSpace(options.DataDirectory), $"{EngineOptions.DataDirectoryName} must be set: the folder the engine keeps its store and indexes in.");
        problems.Require(options.Storage is not null, "Storage must be set.");
        problems.Require(options.Indexes is not null, "Indexes must be set.");
        problems.Require(options.Rebuilds is not null, "Rebuilds must be set.");
        if (options.Storage is { } storage)
        {
            problems.Include(new StoreOptionsValidator().Validate(name, storage));
        }

        if (options.Indexes is { } indexes)
        {
            problems.Include(new IndexOptionsValidator().Validate(name, indexes));
        }

        if (options.Rebuilds is { } rebuilds)
        {
            problems.Require(rebuilds.SwapLagEtags >= 0, $"{EngineOptions.RebuildsPrefix}{nameof(rebuilds.SwapLagEtags)} is {rebuilds.SwapLagEtags}; it must be 0 or more.");
            problems.Require(
                rebuilds.DrainTimeout > TimeSpan.Zero && rebuilds.DrainTimeout <= TimeSpan.FromHours(1),
                $"{EngineOptions.RebuildsPrefix}{nameof(rebuilds.DrainTimeout)} is {rebuilds.DrainTimeout}; it must be more than 0 and at most 01:00:00.");
        }

        return problems.Result;
    }
}
