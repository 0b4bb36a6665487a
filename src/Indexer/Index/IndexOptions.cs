using System.Globalization;

using Microsoft.Extensions.Options;

namespace Indexing.Indexer;

/// <summary>How an index writes, commits, refreshes and follows the change feed, and how rebuilds run. <c>EngineOptions.Validate</c> judges the rules.</summary>
/// <remarks>
/// Fixed when the index opens (the writer is configured once): <see cref="IndexingThreads"/>,
/// <see cref="IndexingThreadNice"/>, <see cref="RamBufferSizeMB"/>, <see cref="BuildRamBufferSizeMB"/>. The others are read on every use but are not meant to change
/// while the index is open: pass a new instance when reopening. Why the defaults are these:
/// docs/decisions/0011 and 0012; their figures: benchmarks/results/README.md.
/// </remarks>
public sealed record IndexOptions
{
    /// <summary>
    /// Default <see cref="IndexingThreads"/>: 2. Where a core is free a second thread indexes
    /// markedly faster than one, and at nice 10 the foreground Get p99 during a rebuild stays within
    /// its target (docs/decisions/0011; benchmarks/results/README.md, "IndexOnly vs LuceneOnly" and
    /// "Foreground p99 during a rebuild").
    /// </summary>
    public const int DefaultIndexingThreads = 2;

    /// <summary>Default <see cref="RamBufferSizeMB"/>.</summary>
    public const double DefaultRamBufferSizeMB = 16;

    /// <summary>Default <see cref="IndexingThreadNice"/>.</summary>
    public const int DefaultIndexingThreadNice = 10;

    /// <summary>Default <see cref="BuildRamBufferSizeMB"/>.</summary>
    public const double DefaultBuildRamBufferSizeMB = 64;

    /// <summary>Default <see cref="BulkCommitInterval"/>.</summary>
    public static readonly TimeSpan DefaultBulkCommitInterval = TimeSpan.FromSeconds(10);

    /// <summary>Default <see cref="BulkCommitShare"/>.</summary>
    public const double DefaultBulkCommitShare = 0.05;

    /// <summary>Default <see cref="TakeMaxBytes"/>.</summary>
    public const long DefaultTakeMaxBytes = 4L << 20;

    /// <summary>Default <see cref="MaxConcurrentRebuilds"/>.</summary>
    public const int DefaultMaxConcurrentRebuilds = 2;

    /// <summary>Default <see cref="PrefetchBudgetBytes"/>: 256 MiB.</summary>
    public const long DefaultPrefetchBudgetBytes = 256L << 20;

    /// <summary>Smallest <see cref="BulkCommitShare"/>.</summary>
    public const double MinBulkCommitShare = 0.01;

    /// <summary>How messages name these settings: by their place in the engine's options tree (EngineOptions.Indexes), the configuration section <c>Indexes</c>.</summary>
    public const string SettingsPrefix = "Indexes:";

    /// <summary>
    /// Threads adding documents during bulk builds (1..16): each build starts this many workers, and in an
    /// index manager all its builds share this many at once (<c>IndexingSlots</c>: a batch at a time, first
    /// come first served), so builds running together split the threads instead of multiplying them.
    /// Following the change feed uses one per index.
    /// </summary>
    public int IndexingThreads { get; init; } = DefaultIndexingThreads;

    /// <summary>
    /// The OS priority (Linux nice, 0..19; 0 leaves it alone) of a build's indexing threads and of
    /// Lucene's merge threads, so that request threads (nice 0) win the CPU while a rebuild runs. Set
    /// per thread when it starts; a thread already nicer keeps its own. A no-op where unsupported
    /// (<c>IndexingEngine.IndexingThreadNiceUnsupportedReason</c> says why).
    /// </summary>
    public int IndexingThreadNice { get; init; } = DefaultIndexingThreadNice;

    /// <summary>IndexWriter RAM buffer in MB (1..2048) while following: documents are buffered until this much, then flushed as a segment.</summary>
    public double RamBufferSizeMB { get; init; } = DefaultRamBufferSizeMB;

    /// <summary>
    /// IndexWriter RAM buffer in MB (1..2048) during a bulk build: fewer, larger flushed segments. The
    /// writer goes back to <see cref="RamBufferSizeMB"/> when the build ends. Lucene lets indexing
    /// threads run on to twice the buffer before it stalls them, so a build may hold twice this.
    /// </summary>
    public double BuildRamBufferSizeMB { get; init; } = DefaultBuildRamBufferSizeMB;

    /// <summary>While following: commit (a checkpoint) after this many body bytes were indexed since the last commit (1 MiB .. 64 GiB).</summary>
    public long CommitEveryBytes { get; init; } = 256L << 20;

    /// <summary>While following: commit (a checkpoint) at least this often while there are uncommitted changes (100 ms .. 1 h).</summary>
    public TimeSpan CommitInterval { get; init; } = TimeSpan.FromSeconds(10);

    /// <summary>
    /// During a bulk build: the longest wait between commits (100 ms .. 1 h), the cap of the cadence
    /// <see cref="BulkCommitShare"/> sets. Commits run off the feeding thread while the workers go on
    /// adding, each recording the key a resumed build reads after: a build resumed after a crash redoes
    /// at most about one wait of indexing. Each commit flushes what the RAM buffer holds.
    /// </summary>
    public TimeSpan BulkCommitInterval { get; init; } = DefaultBulkCommitInterval;

    /// <summary>
    /// During a bulk build: the wait between commits as a share (0.01 .. 1) of the build's estimated
    /// duration (its total bytes at the rate so far), at least 1 s (and twice the last commit's
    /// duration), at most <see cref="BulkCommitInterval"/>: a crash costs a resumed build at most about
    /// this share of a whole one. 1 commits every <see cref="BulkCommitInterval"/> once a build is
    /// longer than it. The wait in force is <see cref="IndexStatus.BulkCommitInterval"/>.
    /// </summary>
    public double BulkCommitShare { get; init; } = DefaultBulkCommitShare;

    /// <summary>How often the background loop reopens the near-real-time searcher (10 ms .. 10 s): the delay before queries see a write.</summary>
    public TimeSpan RefreshInterval { get; init; } = TimeSpan.FromMilliseconds(200);

    /// <summary>How often a following index polls the change feed when it found nothing new (10 ms .. 10 s).</summary>
    public TimeSpan FollowPollInterval { get; init; } = TimeSpan.FromMilliseconds(100);

    /// <summary>Change-feed entries read per step (1..100,000); their bodies are read with one GetMany.</summary>
    public int ChangeBatchSize { get; init; } = 1024;

    /// <summary>Most documents taken from a batch source at once during a build (1..1,000,000).</summary>
    public int TakeMaxDocuments { get; init; } = 1024;

    /// <summary>
    /// Most body bytes taken from a batch source at once during a build (64 KiB .. 1 GiB; one larger
    /// document is still taken alone). A crash redoes what the feeder and the indexing threads held
    /// besides what was indexed since the last bulk commit (up to a batch per thread in the channel,
    /// one on each thread, one in the feeder's hand), and the indexed-through key moves a batch at a
    /// time: 4 MiB keeps that to a fraction of a percent of a 1 GiB rebuild of small documents, while
    /// a batch is still over 100 ms of a thread's indexing at 30 MB/s, so taking costs nothing
    /// measurable. A giant is a batch of its own: with two threads and 20 MiB giants, up to 100 MiB.
    /// </summary>
    public long TakeMaxBytes { get; init; } = DefaultTakeMaxBytes;

    /// <summary>Failures of the index itself in a row (1..1000) after which following stops and the index is in <see cref="IndexState.Error"/>.</summary>
    public int MaxConsecutiveFailures { get; init; } = 5;

    /// <summary>
    /// A side-by-side rebuild's catch-up ends, and its swap begins, once the replacement is at most this
    /// many etags behind the store (0 or more): the swap then applies the rest while the old generation
    /// still serves.
    /// </summary>
    public long SwapLagEtags { get; init; } = 1000;

    /// <summary>
    /// Longest wait (more than 0, at most 1 h) for queries still running on a generation that a swap
    /// replaces, a delete removes or a close ends; after it, the generation closes when its last query ends.
    /// </summary>
    public TimeSpan DrainTimeout { get; init; } = TimeSpan.FromSeconds(30);

    /// <summary>
    /// Most rebuilds (1..64) that run at once in one index manager, a first build of a new index
    /// included; the others wait, first come first served, in phase <see cref="RebuildPhase.Queued"/>
    /// (read nothing, hold no prefetch). The bound is memory: each running rebuild adds its writers'
    /// Lucene buffers, 160 MiB at the defaults (the replacement's and the serving index's, 2 x (64 + 16)
    /// MB; README, "Memory"), so the process's memory grows with this setting, not with the number of
    /// indexes changed at once; their prefetches share the one <see cref="PrefetchBudgetBytes"/>, and
    /// their builds the <see cref="IndexingThreads"/>, whatever their number. Rebuilds running together
    /// over one collection share one read of it (<see cref="SharedPassWindow"/>). A fixed number rather
    /// than one per core, since the buffers do not shrink on a small machine; 2 let a short rebuild run
    /// beside a long one instead of behind it; 1 is the least memory. Past 64 the buffers alone pass
    /// 10 GiB: a value that large is a typo more likely than a plan. Read when the manager opens.
    /// </summary>
    public int MaxConcurrentRebuilds { get; init; } = DefaultMaxConcurrentRebuilds;

    /// <summary>
    /// How long (0 to 1 min) after a rebuild's bulk phase starts reading a collection others may join
    /// its read, a shared pass: one snapshot and one read of each document for every rebuild of an index
    /// over that collection that starts (or is admitted from the queue) meanwhile. The pass keeps what
    /// it read since its start for that long, within its prefetch budget, so a reader that joins late
    /// misses nothing; a rebuild that comes later waits for the pass to end and starts the next. 0: every
    /// rebuild reads the collection on its own. docs/decisions/0014-shared-pass.md says why 1 s: rebuilds
    /// started by one request, one open or a script's back-to-back calls arrive within it, and a lone
    /// rebuild loses at most that long, when its budget fills before the window closes.
    /// </summary>
    public TimeSpan SharedPassWindow { get; init; } = TimeSpan.FromSeconds(1);

    /// <summary>
    /// The one byte budget (1 MiB .. 64 GiB) every prefetch of the engine draws from: document bytes
    /// read or being read and not yet taken by an indexer, over all rebuilds (and any other prefetch of
    /// the engine) together, so that the memory bound holds however many run at once. A rebuild's
    /// prefetch also starts with this as its own live budget (one rebuild alone may use all of it;
    /// an operator's rethrottle lowers one prefetch's own). A document larger than the whole budget is
    /// read alone, when no prefetch holds anything. Read when the engine opens (docs/architecture.md, "Memory bound").
    /// </summary>
    public long PrefetchBudgetBytes { get; init; } = DefaultPrefetchBudgetBytes;

    // Test seam: opens the index's engine in its directory (default: the Lucene engine,
    // LuceneIndexSink.Open). Fault-injection tests open the Lucene engine over a directory that makes
    // the Nth write or fsync fail.
    internal Func<string, IndexDefinition, IndexOptions, IIndexSink>? OpenSink { get; init; }

    // The engine's pool of indexing slots that every build's workers index in (IndexingSlots.cs); set
    // by the index manager for all its indexes; null: each build makes its own of IndexingThreads.
    internal IndexingSlots? IndexingSlots { get; init; }

    // Test hook: called when StartFollowing begins, with the index; it may throw.
    internal Action<DocumentIndex>? StartFollowingHook { get; init; }

    // Test hook: called by a build's worker with each document's id before it is written; it may
    // block (a slow batch holds the indexed-through key back).
    internal Action<string>? BuildDocumentHook { get; init; }

    /// <summary>The effective settings, one line.</summary>
    public override string ToString() => string.Create(
        CultureInfo.InvariantCulture,
        $"threads {IndexingThreads} at nice {IndexingThreadNice}, RAM buffer {RamBufferSizeMB} MB ({BuildRamBufferSizeMB} MB building), commit every {ByteSize.Format(CommitEveryBytes)} or {CommitInterval.TotalSeconds} s, bulk commit every {BulkCommitShare * 100:0.#}% of the build ({BulkCommitCadence.MinimumInterval.TotalSeconds} .. {BulkCommitInterval.TotalSeconds} s), " +
        $"refresh {RefreshInterval.TotalMilliseconds} ms, poll {FollowPollInterval.TotalMilliseconds} ms, change batch {ChangeBatchSize}, " +
        $"take {TakeMaxDocuments} docs / {ByteSize.Format(TakeMaxBytes)}, error after {MaxConsecutiveFailures} failures, " +
        $"swap within {SwapLagEtags} etags, drain up to {DrainTimeout.TotalSeconds} s, {MaxConcurrentRebuilds} rebuilds at once, sharing a read for {SharedPassWindow.TotalSeconds} s, " +
        $"prefetch budget {ByteSize.Format(PrefetchBudgetBytes)} for all");
}

/// <summary>
/// The rules of <see cref="IndexOptions"/>, each problem naming the setting, its value and its range;
/// run when an index opens (<see cref="DocumentIndex.Open"/>, and for every index by <see cref="IndexManager"/>).
/// </summary>
internal sealed class IndexOptionsValidator : IValidateOptions<IndexOptions>
{
    public ValidateOptionsResult Validate(string? name, IndexOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var problems = new OptionProblems(IndexOptions.SettingsPrefix);
        Count(problems, options.IndexingThreads, 1, 16, nameof(options.IndexingThreads), "threads");
        Count(problems, options.IndexingThreadNice, 0, ThreadNice.Lowest, nameof(options.IndexingThreadNice), "nice, 0 = request threads' priority");
        Megabytes(problems, options.RamBufferSizeMB, nameof(options.RamBufferSizeMB));
        Megabytes(problems, options.BuildRamBufferSizeMB, nameof(options.BuildRamBufferSizeMB));
        Bytes(problems, options.CommitEveryBytes, 1L << 20, 64L << 30, nameof(options.CommitEveryBytes));
        Time(problems, options.CommitInterval, TimeSpan.FromMilliseconds(100), TimeSpan.FromHours(1), nameof(options.CommitInterval));
        Time(problems, options.BulkCommitInterval, TimeSpan.FromMilliseconds(100), TimeSpan.FromHours(1), nameof(options.BulkCommitInterval));
        problems.Require(double.IsFinite(options.BulkCommitShare) && options.BulkCommitShare is >= IndexOptions.MinBulkCommitShare and <= 1,
            $"{nameof(options.BulkCommitShare)} is {options.BulkCommitShare.ToString(CultureInfo.InvariantCulture)}; it must be from {IndexOptions.MinBulkCommitShare.ToString(CultureInfo.InvariantCulture)} to 1 " +
            $"(the share of a bulk build's estimated duration between its commits; default {IndexOptions.DefaultBulkCommitShare.ToString(CultureInfo.InvariantCulture)}).");
        Time(problems, options.RefreshInterval, TimeSpan.FromMilliseconds(10), TimeSpan.FromSeconds(10), nameof(options.RefreshInterval));
        Time(problems, options.FollowPollInterval, TimeSpan.FromMilliseconds(10), TimeSpan.FromSeconds(10), nameof(options.FollowPollInterval));
        Count(problems, options.ChangeBatchSize, 1, 100_000, nameof(options.ChangeBatchSize), "entries");
        problems.Require(options.SwapLagEtags >= 0, $"{nameof(options.SwapLagEtags)} is {options.SwapLagEtags}; it must be 0 or more.");
        problems.Require(
            options.DrainTimeout > TimeSpan.Zero && options.DrainTimeout <= TimeSpan.FromHours(1),
            $"{nameof(options.DrainTimeout)} is {options.DrainTimeout}; it must be more than 0 and at most 01:00:00.");
        Count(problems, options.TakeMaxDocuments, 1, 1_000_000, nameof(options.TakeMaxDocuments), "documents");
        Bytes(problems, options.TakeMaxBytes, 64L << 10, 1L << 30, nameof(options.TakeMaxBytes));
        Count(problems, options.MaxConsecutiveFailures, 1, 1000, nameof(options.MaxConsecutiveFailures), "failures");
        Time(problems, options.SharedPassWindow, TimeSpan.Zero, TimeSpan.FromMinutes(1), nameof(options.SharedPassWindow));
        Count(problems, options.MaxConcurrentRebuilds, 1, 64, nameof(options.MaxConcurrentRebuilds), "rebuilds running at once, each holding a build buffer");
        Bytes(problems, options.PrefetchBudgetBytes, 1L << 20, 64L << 30, nameof(options.PrefetchBudgetBytes));
        return problems.Result;
    }

    private static void Megabytes(OptionProblems problems, double value, string name) =>
        problems.Require(double.IsFinite(value) && value is >= 1 and <= 2048,
            $"{name} is {value.ToString(CultureInfo.InvariantCulture)}; it must be from 1 to 2048 (MB).");

    private static void Count(OptionProblems problems, int value, int min, int max, string name, string unit) =>
        problems.Require(value >= min && value <= max, $"{name} is {value}; it must be from {min} to {max} ({unit}).");

    // Bounds are whole binary units, so they read exactly ("1 MiB", "64 GiB").
    private static void Bytes(OptionProblems problems, long value, long min, long max, string name) =>
        problems.Require(value >= min && value <= max, $"{name} is {value}; it must be from {ByteSize.Format(min)} to {ByteSize.Format(max)}.");

    private static void Time(OptionProblems problems, TimeSpan value, TimeSpan min, TimeSpan max, string name) =>
        problems.Require(value >= min && value <= max, $"{name} is {value}; it must be from {min} to {max}.");
}
