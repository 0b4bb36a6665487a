using Indexing.Measurement;

namespace Indexing.Measurement.Measure;

/// <summary>What the <c>measure</c> command was asked to do (validated by the command line).</summary>
/// <param name="InputFile">The NDJSON file: one <c>{"id": "...", "doc": {...}}</c> per line.</param>
/// <param name="DefinitionFile">An index definition (JSON); null for the default, every string field of the collection as text.</param>
/// <param name="Collection">The collection to rebuild; null for the one with the most bytes (or the definition's).</param>
/// <param name="Device">Where the rebuilds read from: the local disk with direct reads, or the modelled network disk.</param>
/// <param name="Repeat">Runs of each strategy and bound; medians are reported.</param>
/// <param name="JsonFile">Where the results are written as JSON.</param>
/// <param name="TimelineFile">Where the adaptive run's timeline CSV goes (its plot next to it, as .svg); null for none.</param>
/// <param name="WorkDirectory">Holds the fresh store and the indexes built; emptied first (only if it is one of ours), removed after.</param>
/// <param name="KeepStore">Leave the loaded store in the work directory afterwards.</param>
/// <param name="MaxDocumentBytes">Largest document the store accepts; longer lines are reported and skipped.</param>
/// <param name="InMemoryLimitBytes">Most document bytes the IndexOnly bound holds in memory at once.</param>
/// <param name="Modes">The strategies and bounds to run, in <see cref="MeasureResults.Modes"/> order (default: all).</param>
/// <param name="IndexingThreads">Threads indexing in every run that indexes (the rebuilds, IndexOnly, LuceneOnly).</param>
public sealed record MeasureSettings(
    string InputFile,
    string? DefinitionFile,
    string? Collection,
    RebuildDevice Device,
    int Repeat,
    string JsonFile,
    string? TimelineFile,
    string WorkDirectory,
    bool KeepStore,
    long MaxDocumentBytes,
    long InMemoryLimitBytes,
    IReadOnlyList<RebuildMode>? Modes = null,
    int IndexingThreads = Indexer.IndexOptions.DefaultIndexingThreads)
{
    /// <summary>The strategies and bounds to run, in <see cref="MeasureResults.Modes"/> order.</summary>
    public IReadOnlyList<RebuildMode> Modes { get; init; } = Modes ?? MeasureResults.Modes;
}
