using Indexing.Indexer;
using Indexing.Storage;
using Microsoft.Extensions.Options;

namespace Indexing.Engine;

/// <summary>
/// Everything an <see cref="IndexingEngine"/> opens with, as one tree fixed at open. Each branch's property
/// name is also its configuration section, and messages name a setting by its path in the tree
/// (<c>Storage:MaxDocumentBytes</c>, <c>Indexes:IndexingThreads</c>), so a host that binds the sections
/// of the same names shows refusals that name what the operator wrote. <see cref="Validate"/> judges every
/// rule at once; <see cref="IndexingEngine.Open"/> runs it once and refuses to open on any problem. Live limits of a running rebuild
/// are not here: they change through <see cref="IndexingEngine.UpdateRebuildLimits"/>.
/// </summary>
public sealed record EngineOptions
{
    /// <summary>How messages name <see cref="DataDirectory"/>.</summary>
    public const string DataDirectoryName = "DataDirectory";

    /// <summary>The folder the engine owns: the store in <c>store/</c>, the catalog and the Lucene indexes in <c>indexes/</c>. Created when missing.</summary>
    public required string DataDirectory { get; init; }

    /// <summary>The document store (section <c>Storage</c>).</summary>
    public StoreOptions Storage { get; init; } = StoreOptions.Default;

    /// <summary>What every index is opened with: indexing threads, commit cadence, refresh, how rebuilds swap (section <c>Indexes</c>).</summary>
    public IndexOptions Indexes { get; init; } = new();

    /// <summary>Where the store lives: <c>&lt;DataDirectory&gt;/store</c>.</summary>
    public string StoreDirectory => Path.Combine(DataDirectory, "store");

    /// <summary>Where the index catalog and the Lucene indexes live: <c>&lt;DataDirectory&gt;/indexes</c>.</summary>
    public string IndexesDirectory => Path.Combine(DataDirectory, "indexes");

    /// <summary>
    /// Every broken rule of the tree, each naming its setting by its path (<c>Indexes:IndexingThreads is 0;
    /// it must be from 1 to 64.</c>), its value and its range; empty when the options are valid. A host
    /// checks its configuration with this before it opens, so that one message names every mistake.
    /// </summary>
    public IReadOnlyList<string> Validate()
    {
        var result = new EngineOptionsValidator().Validate(name: null, this);
        return result.Failed ? [.. result.Failures] : [];
    }

    /// <summary>The effective configuration, for a host's start-up log line.</summary>
    public override string ToString() =>
        $"data {DataDirectory}; store: {Storage}; indexes: {Indexes}";
}

/// <summary>
/// Every rule of <see cref="EngineOptions"/>, each problem naming its setting by its path in the tree, its
/// value and its range; all problems at once. The one validator of the tree: the store's and the
/// indexes' own rules are included, not repeated. Hosts reach it through <see cref="EngineOptions.Validate"/>.
/// </summary>
internal sealed class EngineOptionsValidator : IValidateOptions<EngineOptions>
{
    public ValidateOptionsResult Validate(string? name, EngineOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var problems = new OptionProblems();
        problems.Require(!string.IsNullOrWhiteSpace(options.DataDirectory), $"{EngineOptions.DataDirectoryName} must be set: the folder the engine keeps its store and indexes in.");
        problems.Require(options.Storage is not null, "Storage must be set.");
        problems.Require(options.Indexes is not null, "Indexes must be set.");
        if (options.Storage is { } storage)
        {
            problems.Include(new StoreOptionsValidator().Validate(name, storage));
        }

        if (options.Indexes is { } indexes)
        {
            problems.Include(new IndexOptionsValidator().Validate(name, indexes));
        }

        return problems.Result;
    }
}
