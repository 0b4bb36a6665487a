using System.Globalization;

namespace Indexing.Indexer;

/// <summary>How an index writes, commits, refreshes and follows the change feed. Validated as each value is set.</summary>
/// <remarks>
/// Fixed when the index opens (the writer is configured once): <see cref="IndexingThreads"/>,
/// <see cref="IndexingThreadNice"/>, <see cref="RamBufferSizeMB"/>, <see cref="BuildRamBufferSizeMB"/>. The others are read on every use but are not meant to change
/// while the index is open: pass a new instance when reopening. Defaults come from measurements
/// on a 2-core VM (see benchmarks/results/indexer.md and indexing-throughput.md).
/// </remarks>
public sealed record IndexOptions
{
    /// <summary>Default <see cref="IndexingThreads"/>.</summary>
    public const int DefaultIndexingThreads = 1;

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

    /// <summary>Smallest <see cref="BulkCommitShare"/>.</summary>
    public const double MinBulkCommitShare = 0.01;

    private readonly int _indexingThreads = DefaultIndexingThreads;
    private readonly double _ramBufferSizeMB = DefaultRamBufferSizeMB;
    private readonly double _buildRamBufferSizeMB = DefaultBuildRamBufferSizeMB;
    private readonly int _indexingThreadNice = DefaultIndexingThreadNice;
    private readonly long _commitEveryBytes = 256L << 20;
    private readonly TimeSpan _commitInterval = TimeSpan.FromSeconds(10);
    private readonly TimeSpan _bulkCommitInterval = DefaultBulkCommitInterval;
    private readonly double _bulkCommitShare = DefaultBulkCommitShare;
    private readonly TimeSpan _refreshInterval = TimeSpan.FromMilliseconds(200);
    private readonly TimeSpan _followPollInterval = TimeSpan.FromMilliseconds(100);
    private readonly int _changeBatchSize = 1024;
    private readonly int _takeMaxDocuments = 1024;
    private readonly long _takeMaxBytes = 16L << 20;
    private readonly int _maxConsecutiveFailures = 5;

    /// <summary>Threads adding documents to the one IndexWriter during a bulk build (1..16); following the change feed uses one.</summary>
    public int IndexingThreads
    {
        get => _indexingThreads;
        init => _indexingThreads = Check(value, 1, 16, nameof(IndexingThreads), "threads");
    }

    /// <summary>
    /// The OS priority (Linux nice, 0..19; 0 leaves it alone) of a build's indexing threads and of
    /// Lucene's merge threads, so that request threads (nice 0) win the CPU while a rebuild runs. Set
    /// per thread when it starts; a thread already nicer keeps its own. A no-op where unsupported
    /// (<see cref="ThreadNice.UnsupportedReason"/> says why).
    /// </summary>
    public int IndexingThreadNice
    {
        get => _indexingThreadNice;
        init => _indexingThreadNice = Check(value, 0, ThreadNice.Lowest, nameof(IndexingThreadNice), "nice, 0 = request threads' priority");
    }

    /// <summary>IndexWriter RAM buffer in MB (1..2048) while following: documents are buffered until this much, then flushed as a segment.</summary>
    public double RamBufferSizeMB
    {
        get => _ramBufferSizeMB;
        init => _ramBufferSizeMB = CheckMegabytes(value, nameof(RamBufferSizeMB));
    }

    /// <summary>
    /// IndexWriter RAM buffer in MB (1..2048) during a bulk build: fewer, larger flushed segments. The
    /// writer goes back to <see cref="RamBufferSizeMB"/> when the build ends. Lucene lets indexing
    /// threads run on to twice the buffer before it stalls them, so a build may hold twice this.
    /// </summary>
    public double BuildRamBufferSizeMB
    {
        get => _buildRamBufferSizeMB;
        init => _buildRamBufferSizeMB = CheckMegabytes(value, nameof(BuildRamBufferSizeMB));
    }

    /// <summary>While following: commit (a checkpoint) after this many body bytes were indexed since the last commit (1 MiB .. 64 GiB).</summary>
    public long CommitEveryBytes
    {
        get => _commitEveryBytes;
        init => _commitEveryBytes = CheckBytes(value, 1L << 20, 64L << 30, nameof(CommitEveryBytes));
    }

    /// <summary>While following: commit (a checkpoint) at least this often while there are uncommitted changes (100 ms .. 1 h).</summary>
    public TimeSpan CommitInterval
    {
        get => _commitInterval;
        init => _commitInterval = CheckTime(value, TimeSpan.FromMilliseconds(100), TimeSpan.FromHours(1), nameof(CommitInterval));
    }

    /// <summary>
    /// During a bulk build: the longest wait between commits (100 ms .. 1 h), the cap of the cadence
    /// <see cref="BulkCommitShare"/> sets. Commits run off the feeding thread while the workers go on
    /// adding, each recording the key a resumed build reads after: a build resumed after a crash redoes
    /// at most about one wait of indexing. Each commit flushes what the RAM buffer holds.
    /// </summary>
    public TimeSpan BulkCommitInterval
    {
        get => _bulkCommitInterval;
        init => _bulkCommitInterval = CheckTime(value, TimeSpan.FromMilliseconds(100), TimeSpan.FromHours(1), nameof(BulkCommitInterval));
    }

    /// <summary>
    /// During a bulk build: the wait between commits as a share (0.01 .. 1) of the build's estimated
    /// duration (its total bytes at the rate so far), at least 1 s (and twice the last commit's
    /// duration), at most <see cref="BulkCommitInterval"/>: a crash costs a resumed build at most about
    /// this share of a whole one. 1 commits every <see cref="BulkCommitInterval"/> once a build is
    /// longer than it. The wait in force is <see cref="IndexStatus.BulkCommitInterval"/>.
    /// </summary>
    public double BulkCommitShare
    {
        get => _bulkCommitShare;
        init => _bulkCommitShare = double.IsFinite(value) && value is >= MinBulkCommitShare and <= 1
            ? value
            : throw new ArgumentOutOfRangeException(nameof(BulkCommitShare), value,
                $"{nameof(BulkCommitShare)} is {value.ToString(CultureInfo.InvariantCulture)}; it must be from {MinBulkCommitShare.ToString(CultureInfo.InvariantCulture)} to 1 " +
                $"(the share of a bulk build's estimated duration between its commits; default {DefaultBulkCommitShare.ToString(CultureInfo.InvariantCulture)}).");
    }

    /// <summary>How often the background loop reopens the near-real-time searcher (10 ms .. 10 s): the delay before queries see a write.</summary>
    public TimeSpan RefreshInterval
    {
        get => _refreshInterval;
        init => _refreshInterval = CheckTime(value, TimeSpan.FromMilliseconds(10), TimeSpan.FromSeconds(10), nameof(RefreshInterval));
    }

    /// <summary>How often a following index polls the change feed when it found nothing new (10 ms .. 10 s).</summary>
    public TimeSpan FollowPollInterval
    {
        get => _followPollInterval;
        init => _followPollInterval = CheckTime(value, TimeSpan.FromMilliseconds(10), TimeSpan.FromSeconds(10), nameof(FollowPollInterval));
    }

    /// <summary>Change-feed entries read per step (1..100,000); their bodies are read with one GetMany.</summary>
    public int ChangeBatchSize
    {
        get => _changeBatchSize;
        init => _changeBatchSize = Check(value, 1, 100_000, nameof(ChangeBatchSize), "entries");
    }

    /// <summary>Most documents taken from a batch source at once during a build (1..1,000,000).</summary>
    public int TakeMaxDocuments
    {
        get => _takeMaxDocuments;
        init => _takeMaxDocuments = Check(value, 1, 1_000_000, nameof(TakeMaxDocuments), "documents");
    }

    /// <summary>Most body bytes taken from a batch source at once during a build (64 KiB .. 1 GiB; one larger document is still taken alone).</summary>
    public long TakeMaxBytes
    {
        get => _takeMaxBytes;
        init => _takeMaxBytes = CheckBytes(value, 64L << 10, 1L << 30, nameof(TakeMaxBytes));
    }

    /// <summary>Failures of the index itself in a row (1..1000) after which following stops and the index is in <see cref="IndexState.Error"/>.</summary>
    public int MaxConsecutiveFailures
    {
        get => _maxConsecutiveFailures;
        init => _maxConsecutiveFailures = Check(value, 1, 1000, nameof(MaxConsecutiveFailures), "failures");
    }

    // Test seam: opens the index's engine in its directory (default: the Lucene engine,
    // LuceneIndexSink.Open). Fault-injection tests open the Lucene engine over a directory that makes
    // the Nth write or fsync fail.
    internal Func<string, IndexDefinition, IndexOptions, IIndexSink>? OpenSink { get; init; }

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
        $"take {TakeMaxDocuments} docs / {ByteSize.Format(TakeMaxBytes)}, error after {MaxConsecutiveFailures} failures");

    private static double CheckMegabytes(double value, string name) =>
        double.IsFinite(value) && value is >= 1 and <= 2048
            ? value
            : throw new ArgumentOutOfRangeException(name, value, $"{name} is {value.ToString(CultureInfo.InvariantCulture)}; it must be from 1 to 2048 (MB).");

    private static int Check(int value, int min, int max, string name, string unit) =>
        value >= min && value <= max
            ? value
            : throw new ArgumentOutOfRangeException(name, value, $"{name} is {value}; it must be from {min} to {max} ({unit}).");

    // Bounds are whole binary units, so they read exactly ("1 MiB", "64 GiB").
    private static long CheckBytes(long value, long min, long max, string name) =>
        value >= min && value <= max
            ? value
            : throw new ArgumentOutOfRangeException(name, value, $"{name} is {value}; it must be from {ByteSize.Format(min)} to {ByteSize.Format(max)}.");

    private static TimeSpan CheckTime(TimeSpan value, TimeSpan min, TimeSpan max, string name) =>
        value >= min && value <= max
            ? value
            : throw new ArgumentOutOfRangeException(name, value, $"{name} is {value}; it must be from {min} to {max}.");
}
