using System.Diagnostics;
using Indexing.Indexer;
using Indexing.Prefetcher;
using Indexing.Storage;

namespace Indexing.Measurement;

/// <summary>
/// The measurement engine: runs one rebuild of <see cref="Definition"/> from a store (a new index
/// in a temporary directory, deleted afterwards) with a strategy or a bound, on a device,
/// optionally under a closed-loop foreground Get load, and returns every figure. Benchmarks and the
/// <c>measure</c> command call it; it does no statistics over repeats (they do, or BenchmarkDotNet).
/// <para>
/// The caller owns the store and keeps it open while this is used. Runs must not overlap: each one
/// measures the whole process (working set, CPU). Files: this one runs a rebuild,
/// RebuildWorkload.Sampling.cs records its timeline, RebuildWorkload.LuceneOnly.cs runs the
/// LuceneOnly bound. A run that indexes opens its index before its clock starts and closes it after
/// the clock stops, so every run times the build with its final commit, and no open or close.
/// </para>
/// <para>
/// The IndexOnly bound indexes with input costing nothing, and commits as a rebuild does: its
/// source hands the documents out in key order, saying how far each batch reaches, with the
/// collection's totals known, so the build makes the bulk commits (checkpoints) a build from the
/// prefetcher makes, on the same cadence. Without them the bound would leave out their flushes and
/// the merges of the smaller segments they make, work every rebuild does (benchmarks/results/
/// README.md, "Rebuild vs its bound and FixedBatch"). A collection of at most
/// <see cref="InMemoryLimitBytes"/> of bodies is read into memory once, before any clock starts.
/// A larger one is read during each IndexOnly run in chunks of at most the limit (a document
/// larger than the limit is a chunk of its own), one held at a time, each loaded when the previous
/// one is used up while the indexer waits; the loading time is taken out of the run's
/// <see cref="RebuildFigures.Elapsed"/> and <see cref="RebuildFigures.IndexerStall"/>,
/// <see cref="RebuildFigures.IndexOnlyChunks"/> says how many chunks there were and
/// <see cref="RebuildFigures.IndexOnlyLoadingTime"/> how long they took to load. The foreground
/// load of such a collection picks from a uniform sample of at most 100,000 of its ids, not from
/// all of them. So memory stays bounded for collections of any size (the <c>measure</c> command
/// runs on users' files).
/// </para>
/// </summary>
public sealed partial class RebuildWorkload
{
    /// <summary>Default <see cref="InMemoryLimitBytes"/>: 1 GiB.</summary>
    public const long DefaultInMemoryLimitBytes = 1L << 30;

    /// <summary>Default <see cref="ForegroundIdSampleCap"/>: 100,000 ids.</summary>
    internal const int DefaultForegroundIdSampleCap = 100_000;

    // Fixed, so that every workload over the same collection samples the same ids.
    private const int ForegroundIdSampleSeed = 1;

    private readonly DocumentStore _store;
    private readonly long _inMemoryLimitBytes = DefaultInMemoryLimitBytes;
    private readonly int _foregroundIdSampleCap = DefaultForegroundIdSampleCap;
    private List<PrefetchedDocument>? _documents;
    private string[]? _ids;
    private long _snapshotEtag;

    /// <param name="store">The documents; open it with direct reads for the local-disk figures to mean anything.</param>
    /// <param name="definition">The index rebuilt; its collection is the one read.</param>
    /// <param name="workDirectory">Where each run's index is built (a fresh subdirectory per run, deleted after it).</param>
    internal RebuildWorkload(DocumentStore store, IndexDefinition definition, string workDirectory, IndexOptions? indexOptions = null, PrefetchOptions? prefetchOptions = null)
    {
        ArgumentNullException.ThrowIfNull(store);
        ArgumentNullException.ThrowIfNull(definition);
        ArgumentException.ThrowIfNullOrEmpty(workDirectory);
        _store = store;
        Definition = definition;
        WorkDirectory = workDirectory;
        IndexOptions = indexOptions ?? new IndexOptions();
        PrefetchOptions = (prefetchOptions ?? new PrefetchOptions()).Validate();
        Directory.CreateDirectory(workDirectory);
    }

    /// <summary>
    /// The indexer's options for measured rebuilds (the benchmarks and `measure`): takes of at most
    /// 1 MiB / 256 documents. With larger takes the indexer's channel (one batch per indexing
    /// thread) plus the batches being indexed hold several takes ahead of indexing (64 MiB with the
    /// 16 MiB takes of the time), which can be the whole of a dataset of tens of MB: every strategy
    /// then hands out everything within about a second and the rest of the rebuild indexes from that
    /// queue (the first benchmark run, 2026-11-23, in git's history of benchmarks/results). On a real
    /// rebuild of tens of GB that queue is noise;
    /// small takes make a rebuild of tens of MB behave like its steady state, reading at the
    /// indexer's pace under the prefetcher's budget.
    /// </summary>
    public static IndexOptions SmallTakes { get; } = new() { TakeMaxBytes = 1L << 20, TakeMaxDocuments = 256 };

    /// <summary>
    /// The fixed L the BestFixed bound tries, in the order it tries them: from the most readers
    /// down, stopping once two in a row are each more than <see cref="BestFixedStopMargin"/> slower
    /// than the best so far. Below the knee fewer readers only deliver less (each reader adds a
    /// stream until the device or the CPU is full), so the rest could not win, and they are the
    /// longest runs (L=1 on a slow disk takes 16 times as long as L=16).
    /// </summary>
    public static IReadOnlyList<int> BestFixedConcurrencies { get; } = [64, 32, 16, 8, 4, 2, 1];

    /// <summary>See <see cref="BestFixedConcurrencies"/>: 10%.</summary>
    public const double BestFixedStopMargin = 0.10;

    /// <summary>How often a run samples its timeline and the process working set.</summary>
    public static TimeSpan SampleInterval { get; } = TimeSpan.FromMilliseconds(250);

    public IndexDefinition Definition { get; }

    public string WorkDirectory { get; }

    public IndexOptions IndexOptions { get; }

    internal PrefetchOptions PrefetchOptions { get; }

    /// <summary>
    /// The most body bytes the IndexOnly bound holds in memory (default 1 GiB, more than 0): a
    /// collection up to it is held whole, a larger one in chunks of at most it (see the class
    /// remarks). Up to it the foreground load picks from the held documents' ids; over it, from a
    /// uniform sample of at most 100,000 of the collection's ids.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is 0 or negative.</exception>
    public long InMemoryLimitBytes
    {
        get => _inMemoryLimitBytes;
        init => _inMemoryLimitBytes = value > 0
            ? value
            : throw new ArgumentOutOfRangeException(
                nameof(InMemoryLimitBytes), value, $"{nameof(InMemoryLimitBytes)} is {value}; it must be more than 0 bytes (the default is {DefaultInMemoryLimitBytes} bytes, 1 GiB).");
    }

    /// <summary>
    /// The most ids kept for the foreground load of a collection over <see cref="InMemoryLimitBytes"/>
    /// (default <see cref="DefaultForegroundIdSampleCap"/>, more than 0): a uniform sample of the
    /// collection's ids, drawn with a fixed seed. Settable for tests.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is 0 or negative.</exception>
    internal int ForegroundIdSampleCap
    {
        get => _foregroundIdSampleCap;
        init => _foregroundIdSampleCap = value > 0
            ? value
            : throw new ArgumentOutOfRangeException(nameof(ForegroundIdSampleCap), value, $"{nameof(ForegroundIdSampleCap)} is {value}; it must be more than 0 ids.");
    }

    /// <summary>Documents of the collection (known after <see cref="LoadIntoMemoryAsync"/>).</summary>
    public long Documents { get; private set; }

    /// <summary>Body bytes of the collection (known after <see cref="LoadIntoMemoryAsync"/>).</summary>
    public long Bytes { get; private set; }

    /// <summary>Whether <see cref="LoadIntoMemoryAsync"/> kept the collection's bodies (it was within <see cref="InMemoryLimitBytes"/>).</summary>
    internal bool HoldsBodies => _documents is not null;

    /// <summary>The ids the foreground load picks from (after <see cref="LoadIntoMemoryAsync"/>; null before).</summary>
    internal IReadOnlyList<string>? ForegroundIds => _ids;

    /// <summary>
    /// Learns the collection once, as of a snapshot: <see cref="Documents"/>, <see cref="Bytes"/>
    /// and a uniform sample of its ids, from a metadata scan (sizes without bodies); then, when its
    /// bodies are at most <see cref="InMemoryLimitBytes"/>, reads them into memory as the IndexOnly
    /// bound's input, and the foreground load picks from all their ids. A larger collection is read
    /// by each IndexOnly run in chunks instead, and the foreground load picks from the sample.
    /// <see cref="RunAsync"/> calls it when needed; call it first to keep it out of the first
    /// run's wall time.
    /// </summary>
    public async Task LoadIntoMemoryAsync(CancellationToken cancellationToken = default)
    {
        if (_ids is not null)
        {
            return;
        }

        // Reservoir sampling: after n rows, each of them is in the sample with probability cap/n,
        // so the ids kept stay bounded however large the collection (20 M ids of a 10 GB
        // collection of 500 B documents would take more memory than the default limit).
        var sample = new List<string>();
        var draw = new Random(ForegroundIdSampleSeed);
        long scannedDocuments = 0;
        long scannedBytes = 0;
        using (var snapshot = _store.CreateSnapshot())
        {
            foreach (var row in snapshot.ScanMetadata(Definition.Collection, cancellationToken: cancellationToken))
            {
                if (sample.Count < ForegroundIdSampleCap)
                {
                    sample.Add(row.Id);
                }
                else
                {
                    var slot = draw.NextInt64(scannedDocuments + 1);
                    if (slot < ForegroundIdSampleCap)
                    {
                        sample[(int)slot] = row.Id;
                    }
                }

                scannedDocuments++;
                scannedBytes += row.SizeBytes;
            }
        }

        if (scannedBytes > InMemoryLimitBytes)
        {
            // Too large to hold: IndexOnly runs read it in chunks (ChunkedMemoryBatchSource), each
            // run from its own snapshot.
            Documents = scannedDocuments;
            Bytes = scannedBytes;
            _ids = [.. sample];
            return;
        }

        var documents = new List<PrefetchedDocument>();
        long bytes = 0;
        await using var source = Prefetch.Start(_store, Definition.Collection, PrefetchStrategy.Sequential, PrefetchOptions, cancellationToken: cancellationToken);
        while (await source.TakeAsync(IndexOptions.TakeMaxDocuments, IndexOptions.TakeMaxBytes, cancellationToken).ConfigureAwait(false) is { } batch)
        {
            foreach (var document in batch.Documents)
            {
                // Copied: the batch's memory belongs to the prefetcher's run, not to this list.
                documents.Add(document with { Body = document.Body.ToArray() });
                bytes += document.SizeBytes;
            }
        }

        // The figures of the documents held, as before the limit existed (the scan's snapshot
        // above is an earlier one).
        _snapshotEtag = source.SnapshotEtag;
        Documents = documents.Count;
        Bytes = bytes;
        _documents = documents;
        // Every held document's id (the strings are the documents' own): no sample needed.
        _ids = [.. documents.Select(d => d.Id)];
    }

    /// <summary>
    /// One measured run, without foreground load (what the <c>measure</c> command runs).
    /// IndexOnly on a collection over <see cref="InMemoryLimitBytes"/> reads it in chunks from a
    /// snapshot taken when the run starts, and its Elapsed and IndexerStall leave the chunks'
    /// loading out (IndexOnlyLoadingTime says how much).
    /// </summary>
    public Task<RebuildFigures> RunAsync(RebuildMode mode, RebuildDevice device, CancellationToken cancellationToken = default) =>
        RunAsync(mode, device, foregroundReaders: 0, idleWindow: null, cancellationToken);

    /// <summary>
    /// One measured run, optionally under foreground load: the lab's entry (the benchmarks under
    /// load), internal and reached through the assembly's InternalsVisibleTo grants; the product's
    /// <c>measure</c> runs without it. With <paramref name="foregroundReaders"/> &gt; 0, that many closed-loop
    /// readers Get random ids of the collection (over <see cref="InMemoryLimitBytes"/>, of a
    /// uniform sample of them) for <paramref name="idleWindow"/> first (the idle figures), then
    /// throughout the run; the adaptive strategy watches their latency.
    /// <para>
    /// IndexOnly on a collection over <see cref="InMemoryLimitBytes"/> reads it in chunks from a
    /// snapshot taken when the run starts, and its Elapsed and IndexerStall leave the chunks'
    /// loading out (IndexOnlyLoadingTime says how much; the timeline is sampled on the wall clock,
    /// loads included).
    /// </para>
    /// </summary>
    internal async Task<RebuildFigures> RunAsync(
        RebuildMode mode, RebuildDevice device, int foregroundReaders, TimeSpan? idleWindow = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(device);
        ArgumentOutOfRangeException.ThrowIfNegative(foregroundReaders);
        if (!Enum.IsDefined(mode))
        {
            throw new ArgumentOutOfRangeException(nameof(mode), mode, $"mode {(int)mode} is not a RebuildMode; use Sequential, FixedBatch, Adaptive, ReadOnly, IndexOnly, BestFixed or LuceneOnly.");
        }

        if (mode == RebuildMode.BestFixed)
        {
            if (foregroundReaders > 0)
            {
                throw new ArgumentOutOfRangeException(nameof(foregroundReaders), foregroundReaders, "BestFixed measures reading alone at fixed L; run it without foreground readers (0).");
            }

            return await RunBestFixedAsync(device, cancellationToken).ConfigureAwait(false);
        }

        if (mode is RebuildMode.IndexOnly or RebuildMode.LuceneOnly || foregroundReaders > 0)
        {
            await LoadIntoMemoryAsync(cancellationToken).ConfigureAwait(false);
        }

        // One model per run: its queue starts empty, and the foreground and the rebuild share it.
        var disk = device.NetworkDisk is { } parameters ? new NetworkDiskModel(parameters) : null;
        using var readers = foregroundReaders > 0 ? new ForegroundReaders(_store, _ids!, foregroundReaders, disk) : null;
        ForegroundLatency? idle = null;
        if (readers is not null)
        {
            await Task.Delay(idleWindow ?? TimeSpan.FromSeconds(3), cancellationToken).ConfigureAwait(false);
            idle = ForegroundReaders.Summarise(readers.Drain());
        }

        var options = readers is null ? PrefetchOptions : PrefetchOptions with { ForegroundLatency = readers.Latency };
        var indexDirectory = Path.Combine(WorkDirectory, $"index-{Guid.NewGuid():N}");
        try
        {
            return mode == RebuildMode.LuceneOnly
                ? await MeasureLuceneOnlyAsync(device, indexDirectory, readers, idle, cancellationToken).ConfigureAwait(false)
                : await MeasureAsync(mode, device, disk, options, indexDirectory, readers, idle, cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            if (Directory.Exists(indexDirectory))
            {
                DocumentIndex.DeleteDirectory(indexDirectory);
            }
        }
    }

    private async Task<RebuildFigures> MeasureAsync(
        RebuildMode mode, RebuildDevice device, NetworkDiskModel? disk, PrefetchOptions options, string indexDirectory,
        ForegroundReaders? readers, ForegroundLatency? idle, CancellationToken cancellationToken)
    {
        // IndexOnly over the in-memory limit: no whole copy was made, the run loads chunks.
        var chunked = mode == RebuildMode.IndexOnly && _documents is null
            ? new ChunkedMemoryBatchSource(_store, Definition.Collection, InMemoryLimitBytes, (Documents, Bytes))
            : null;
        IBatchSource source = mode switch
        {
            // In key order (a sequential prefetch read them) with the totals known: the build commits
            // on the cadence a rebuild from the prefetcher does (see the class remarks).
            RebuildMode.IndexOnly => chunked ?? (IBatchSource)new MemoryBatchSource(_documents!, _snapshotEtag, inKeyOrder: true),
            RebuildMode.Sequential => Prefetch.Start(_store, Definition.Collection, PrefetchStrategy.Sequential, options, disk, cancellationToken: cancellationToken),
            RebuildMode.FixedBatch => Prefetch.Start(_store, Definition.Collection, PrefetchStrategy.FixedBatch, options, disk, cancellationToken: cancellationToken),
            _ => Prefetch.Start(_store, Definition.Collection, PrefetchStrategy.Adaptive, options, disk, cancellationToken: cancellationToken),
        };
        await using (source.ConfigureAwait(false))
        {
            var pressure = mode == RebuildMode.IndexOnly ? null : source;
            // Opened before the clock starts and closed after it stops (closing waits for running
            // merges): a run times the build, its final commit included, as LuceneOnly is timed.
            using var index = mode == RebuildMode.ReadOnly ? null : DocumentIndex.Open(indexDirectory, Definition, IndexOptions);
            await using var sampler = new RunSampler(pressure, readers);
            var started = Stopwatch.GetTimestamp();
            var processorStarted = Environment.CpuUsage.TotalTime;
            long documents;
            long bytes;
            TimeSpan? stall = null;
            long? commits = null;
            if (mode == RebuildMode.ReadOnly)
            {
                (documents, bytes) = await DropAllAsync(source, cancellationToken).ConfigureAwait(false);
            }
            else
            {
                var metrics = await index!.BuildAsync(source, cancellationToken).ConfigureAwait(false);
                (documents, bytes, stall, commits) = (metrics.Documents, metrics.Bytes, metrics.StallTime, metrics.Commits);
            }

            var elapsed = Stopwatch.GetElapsedTime(started);
            var processorTime = Environment.CpuUsage.TotalTime - processorStarted;
            int? indexOnlyChunks = mode == RebuildMode.IndexOnly ? 1 : null;
            TimeSpan? indexOnlyLoading = mode == RebuildMode.IndexOnly ? TimeSpan.Zero : null;
            if (chunked is not null)
            {
                // Loading a chunk is reading, not indexing: the indexer waited through it (counted
                // as stall), so it leaves both figures and they stay "indexing alone". Known
                // imprecision, in IndexOnly's favour: the indexer is not frozen during a load.
                // Lucene's background merges keep running, and the indexing threads first finish
                // the batches already handed to them (at most IndexingThreads queued plus one in
                // hand each, each at most TakeMaxBytes); that work is taken out with the load (out
                // of the stall too, which is why the stall clamps at zero).
                var loading = chunked.LoadingTime;
                elapsed -= loading;
                processorTime = processorTime > chunked.LoadingProcessorTime ? processorTime - chunked.LoadingProcessorTime : TimeSpan.Zero;
                stall = stall is { } waited ? (waited > loading ? waited - loading : TimeSpan.Zero) : null;
                indexOnlyChunks = chunked.ChunksLoaded;
                indexOnlyLoading = loading;
            }

            var timeline = await sampler.StopAsync().ConfigureAwait(false);
            var final = pressure?.Pressure;
            return new RebuildFigures(
                mode,
                device.Name,
                elapsed,
                documents,
                bytes,
                stall,
                final?.HighWaterMarkBytes,
                final?.LargestOversizedAdmissionBytes,
                final?.BudgetBytes,
                final?.MeanConcurrencyLimit,
                sampler.PeakWorkingSetBytes,
                timeline,
                final?.RecentDecisions ?? [],
                idle,
                sampler.ForegroundDuringRun,
                indexOnlyChunks,
                indexOnlyLoading,
                CollectionsDuringRun: sampler.CollectionsDuringRun,
                ProcessorTime: processorTime,
                Commits: commits);
        }
    }

    // ReadOnly at each fixed L in turn (see BestFixedConcurrencies); the fastest run's figures.
    private async Task<RebuildFigures> RunBestFixedAsync(RebuildDevice device, CancellationToken cancellationToken)
    {
        var sweep = new List<(RebuildFigures Figures, int L)>();
        var slowerInARow = 0;
        foreach (var l in BestFixedConcurrencies)
        {
            var controller = PrefetchOptions.Controller with
            {
                MaxConcurrency = Math.Max(l, PrefetchOptions.Controller.MaxConcurrency),
                InitialConcurrency = l,
                FixedConcurrency = l,
            };
            var disk = device.NetworkDisk is { } parameters ? new NetworkDiskModel(parameters) : null;
            var indexDirectory = Path.Combine(WorkDirectory, $"index-{Guid.NewGuid():N}");
            var figures = await MeasureAsync(RebuildMode.ReadOnly, device, disk, PrefetchOptions with { Controller = controller }, indexDirectory, null, null, cancellationToken)
                .ConfigureAwait(false);
            sweep.Add((figures, l));
            var best = sweep.Max(r => r.Figures.MegabytesPerSecond);
            slowerInARow = figures.MegabytesPerSecond < (1 - BestFixedStopMargin) * best ? slowerInARow + 1 : 0;
            if (slowerInARow == 2)
            {
                break;
            }
        }

        var (winner, winnerL) = sweep.MaxBy(r => r.Figures.MegabytesPerSecond);
        return winner with
        {
            Mode = RebuildMode.BestFixed,
            FixedConcurrency = winnerL,
            BestFixedSweep = [.. sweep.Select(r => new FixedConcurrencyRun(r.L, r.Figures.Elapsed, r.Figures.MegabytesPerSecond))],
        };
    }

    // The ReadOnly sink: takes as the indexer would and drops every batch.
    private async Task<(long Documents, long Bytes)> DropAllAsync(IBatchSource source, CancellationToken cancellationToken)
    {
        long documents = 0;
        long bytes = 0;
        while (await source.TakeAsync(IndexOptions.TakeMaxDocuments, IndexOptions.TakeMaxBytes, cancellationToken).ConfigureAwait(false) is { } batch)
        {
            documents += batch.Count;
            bytes += batch.TotalBytes;
        }

        return (documents, bytes);
    }
}
