using Indexing.Storage;

namespace Indexing.Prefetcher;

/// <summary>The way in: prefetch one collection of a <see cref="DocumentStore"/>, as of a snapshot taken now.</summary>
internal static class Prefetch
{
    /// <summary>
    /// Takes a snapshot of <paramref name="store"/> and starts reading the live documents of
    /// <paramref name="collection"/> (after <paramref name="startAfterId"/>, a checkpointed
    /// <see cref="IBatchSource.HandedOutThrough"/>). The source returned owns the snapshot; dispose it.
    /// The adaptive strategy watches <see cref="DocumentStore.ForegroundReadLatency"/> unless the
    /// options name another histogram. Invalid arguments throw before the snapshot is taken.
    /// </summary>
    public static IBatchSource Start(
        DocumentStore store,
        string collection,
        PrefetchStrategy strategy,
        PrefetchOptions? options = null,
        NetworkDiskModel? diskModel = null,
        string? startAfterId = null,
        CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(store);
        DocumentIds.ValidateCollection(collection);
        if (startAfterId is not null)
        {
            DocumentIds.Validate(startAfterId);
            if (!DocumentIds.GetCollection(startAfterId).SequenceEqual(collection))
            {
                throw new ArgumentException(
                    $"startAfterId {MessageText.Quote(startAfterId)} is not in collection {MessageText.Quote(collection)}; " +
                    "resume from an id the same collection's run handed out (its HandedOutThrough).",
                    nameof(startAfterId));
            }
        }

        if (!Enum.IsDefined(strategy))
        {
            throw new ArgumentOutOfRangeException(
                nameof(strategy), strategy, $"strategy {(int)strategy} is not a PrefetchStrategy; use Adaptive, FixedBatch or Sequential.");
        }

        options ??= new PrefetchOptions();
        if (strategy == PrefetchStrategy.Adaptive && options.ForegroundLatency is null)
        {
            options = options with { ForegroundLatency = store.ForegroundReadLatency };
        }

        options.Validate();
        var device = options.Devices?.For(DeviceName(store, diskModel));
        IDocumentReadSource source = new StoreSnapshotSource(store.CreateSnapshot(), collection, startAfterId);
        try
        {
            if (diskModel is not null)
            {
                source = new ModelledNetworkDiskSource(source, diskModel);
            }

            return PrefetchPipeline.Start(strategy, source, options, cancellationToken, device);
        }
        catch
        {
            // Nothing took ownership: release the snapshot here rather than leak it.
            source.Dispose();
            throw;
        }
    }

    /// <summary>
    /// The device a prefetch of <paramref name="store"/> reads: the store's directory (one store per
    /// engine, so one device; two stores on one volume count as two), and the modelled network disk
    /// in front of it, if any, as a device of its own (its knee is not the local disk's).
    /// </summary>
    internal static string DeviceName(DocumentStore store, NetworkDiskModel? diskModel) =>
        diskModel is null ? store.Path : $"{store.Path} through the {diskModel.Options}";
}
