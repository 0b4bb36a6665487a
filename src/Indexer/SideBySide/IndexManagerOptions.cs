using Microsoft.Extensions.Options;

namespace Indexing.Indexer;

/// <summary>Settings of the <see cref="IndexManager"/>, fixed when it opens.</summary>
internal sealed record IndexManagerOptions
{
    /// <summary>Options every index is opened with, and those of the rebuilds (<see cref="IndexOptions.SwapLagEtags"/>, <see cref="IndexOptions.DrainTimeout"/>).</summary>
    public IndexOptions Index { get; init; } = new();

    /// <summary>See <see cref="IndexOptions.SwapLagEtags"/>.</summary>
    public long SwapLagEtags => Index.SwapLagEtags;

    /// <summary>
    /// See <see cref="IndexOptions.DrainTimeout"/>: after it the rebuild ends (with a note) and the old
    /// generation is closed when its last query ends. Also the longest time closing the manager waits.
    /// </summary>
    public TimeSpan DrainTimeout => Index.DrainTimeout;

    // Test hook: called at each RebuildPoint on the rebuild's thread; it may block (the crash
    // tests stop the process there) or throw (to fail the rebuild at that point).
    internal Action<string, RebuildPoint>? RebuildHook { get; init; }

    // Test hook: called at each DeletePoint on the deleting thread; it may block (the crash tests
    // stop the process there).
    internal Action<string, DeletePoint>? DeleteHook { get; init; }

    // Test hook: called before every catalog write's rename with the name of the index it changes;
    // it may throw (a full disk).
    internal Action<string>? CatalogHook { get; init; }

    // Test seam: called before each step of every catalog write (AtomicFile's steps, with the path
    // each touches); a throw is that step's failure. The fault sweep counts and fails them here.
    internal Action<AtomicFileStep, string>? CatalogFileHook { get; init; }

    // Test hook: called on the query's thread with the index name and generation while the query
    // holds its lease on that generation; it may block (a long query).
    internal Action<string, int>? QueryHook { get; init; }
}

/// <summary>The rules of <see cref="IndexManagerOptions"/>, those of its <see cref="IndexOptions"/> included; run by <see cref="IndexManager.Open"/>.</summary>
internal sealed class IndexManagerOptionsValidator : IValidateOptions<IndexManagerOptions>
{
    public ValidateOptionsResult Validate(string? name, IndexManagerOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var problems = new OptionProblems(nameof(IndexManagerOptions) + ".");
        problems.Require(options.Index is not null, $"{nameof(options.Index)} must be set.");
        if (options.Index is { } index)
        {
            problems.Include(new IndexOptionsValidator().Validate(name, index));
        }

        return problems.Result;
    }
}
