using System.Globalization;

using Microsoft.Extensions.Options;

namespace Indexing.Storage;

/// <summary>Settings of the document store (the server reads them from its <c>Storage</c> section).</summary>
/// <remarks>
/// <see cref="StoreOptionsValidator"/> holds the rules and <see cref="DocumentStore.Open"/> runs it
/// before anything is created. Ranges exist to catch unit mistakes (a MiB figure given as bytes, a
/// stray extra zero) before they reach the engine.
/// </remarks>
public sealed class StoreOptions
{
    /// <summary>Default <see cref="MaxDocumentBytes"/>: 64 MiB.</summary>
    public const long DefaultMaxDocumentBytes = 64L << 20;

    /// <summary>Smallest allowed <see cref="MaxDocumentBytes"/>: 1 KiB.</summary>
    public const long MaxDocumentBytesFloor = 1L << 10;

    /// <summary>Largest allowed <see cref="MaxDocumentBytes"/>: 1 GiB.</summary>
    public const long MaxDocumentBytesCeiling = 1L << 30;

    /// <summary>Default <see cref="BlockCacheBytes"/>: 256 MiB.</summary>
    internal const long DefaultBlockCacheBytes = 256L << 20;

    /// <summary>Smallest non-zero <see cref="BlockCacheBytes"/>: 1 MiB.</summary>
    /// <remarks>
    /// The engine splits its cache into dozens of shards; below about 1 MiB each shard holds
    /// only a handful of blocks, which is no cache in effect. Use 0 to say so outright.
    /// </remarks>
    internal const long BlockCacheBytesFloor = 1L << 20;

    /// <summary>Largest allowed <see cref="BlockCacheBytes"/>: 1 TiB.</summary>
    internal const long BlockCacheBytesCeiling = 1L << 40;

    /// <summary>
    /// Default <see cref="RowCacheBytes"/>: 64 MiB. A row hit skips the block lookup and its decoding,
    /// which is most of a point read of a hot document; search-then-fetch gains nothing, as the search
    /// is its cost. 64 MiB more in the memory bound (docs/decisions/0013; benchmarks/results/README.md,
    /// "Other figures").
    /// </summary>
    internal const long DefaultRowCacheBytes = 64L << 20;

    /// <summary>
    /// Default <see cref="NativeLibrary"/>: the glibc build, because jemalloc needs the process started
    /// with libjemalloc.so.2 preloaded, which <c>dotnet run</c> cannot give itself (docs/decisions/0010;
    /// benchmarks/results/README.md, "Scale and memory"). Switching the default is this line (see
    /// <see cref="RocksDbNative"/>).
    /// </summary>
    public const string DefaultNativeLibrary = "glibc";

    /// <summary>Default <see cref="TombstonePurgeInterval"/>: 1 second.</summary>
    public static readonly TimeSpan DefaultTombstonePurgeInterval = TimeSpan.FromSeconds(1);

    /// <summary>Shortest allowed <see cref="TombstonePurgeInterval"/>: 10 ms.</summary>
    public static readonly TimeSpan TombstonePurgeIntervalFloor = TimeSpan.FromMilliseconds(10);

    /// <summary>Longest allowed <see cref="TombstonePurgeInterval"/>: 1 hour.</summary>
    public static readonly TimeSpan TombstonePurgeIntervalCeiling = TimeSpan.FromHours(1);

    // How messages name these settings: by their place in the engine's options tree (EngineOptions.Storage),
    // which is also the configuration section a host binds them from (Storage:MaxDocumentBytes), so a
    // message names the setting the operator wrote and no host renames it.

    /// <summary>The name messages give <see cref="MaxDocumentBytes"/>.</summary>
    public const string MaxDocumentBytesName = "Storage:MaxDocumentBytes";

    /// <summary>The name messages give <see cref="BlockCacheBytes"/>.</summary>
    public const string BlockCacheBytesName = "Storage:BlockCacheBytes";

    /// <summary>The name messages give <see cref="TombstonePurgeInterval"/>.</summary>
    public const string TombstonePurgeIntervalName = "Storage:TombstonePurgeInterval";

    /// <summary>The name messages give <see cref="RowCacheBytes"/>.</summary>
    public const string RowCacheBytesName = "Storage:RowCacheBytes";

    /// <summary>The name messages give <see cref="NativeLibrary"/>.</summary>
    public const string NativeLibraryName = "Storage:NativeLibrary";

    /// <summary>Options with these values; <see cref="StoreOptionsValidator"/> judges them when a store opens.</summary>
    /// <param name="maxDocumentBytes">Largest UTF-8 body a document may have; 1 KiB to 1 GiB.</param>
    /// <param name="syncWrites">Whether each write waits for the write-ahead log to reach disk.</param>
    /// <param name="blockCacheBytes">Block cache size; 0 for none, else 1 MiB to 1 TiB.</param>
    /// <param name="directReads">Whether the store reads SST and blob files with direct I/O (DB-wide), bypassing the OS page cache.</param>
    /// <param name="tombstonePurgeInterval">How often the tombstone purger asks for the low watermark; 10 ms to 1 h (default 1 s).</param>
    /// <param name="rowCacheBytes">Row cache size for point reads; 0 for none (the default), else 1 MiB to 1 TiB.</param>
    /// <param name="nativeLibrary">The RocksDB build the process runs: <c>glibc</c> or <c>jemalloc</c>, any case (chosen by the first store opened).</param>
    public StoreOptions(
        long maxDocumentBytes = DefaultMaxDocumentBytes,
        bool syncWrites = true,
        long blockCacheBytes = DefaultBlockCacheBytes,
        bool directReads = false,
        TimeSpan? tombstonePurgeInterval = null,
        long rowCacheBytes = DefaultRowCacheBytes,
        string nativeLibrary = DefaultNativeLibrary)
    {
        MaxDocumentBytes = maxDocumentBytes;
        SyncWrites = syncWrites;
        BlockCacheBytes = blockCacheBytes;
        DirectReads = directReads;
        TombstonePurgeInterval = tombstonePurgeInterval ?? DefaultTombstonePurgeInterval;
        RowCacheBytes = rowCacheBytes;
        NativeLibrary = nativeLibrary;
    }

    /// <summary>The defaults: 64 MiB documents, synced writes, 256 MiB block cache, buffered (page-cached) reads.</summary>
    public static StoreOptions Default { get; } = new();

    /// <summary>Largest UTF-8 body a document may have, in bytes.</summary>
    public long MaxDocumentBytes { get; }

    /// <summary>
    /// Whether each write waits for the write-ahead log to reach disk. On by default: the store is
    /// the source of truth, and the indexes are rebuilt from it, so a lost write is lost for good.
    /// </summary>
    public bool SyncWrites { get; }

    /// <summary>Size of the engine's block cache in bytes; 0 means no block cache.</summary>
    public long BlockCacheBytes { get; }

    /// <summary>
    /// Whether every read of the store uses direct I/O (RocksDB's DB-wide <c>use_direct_reads</c>),
    /// bypassing the OS page cache. RocksDB has no per-read switch, so this cannot be limited to
    /// rebuild scans. Off by default; benchmarks turn it on so the page cache does not hide the
    /// device's I/O (the block cache still caches what foreground reads fill).
    /// </summary>
    public bool DirectReads { get; }

    /// <summary>
    /// How often the tombstone purger asks the owner of the indexes for the low watermark and purges
    /// the tombstones below it (only once a watermark is registered: see
    /// <see cref="DocumentStore.RegisterTombstoneWatermark"/>).
    /// </summary>
    public TimeSpan TombstonePurgeInterval { get; }

    /// <summary>
    /// Size of the engine's row cache in bytes; 0 means none. The row cache holds whole values found by
    /// point reads (Get, MultiGet), so a hot document is served without touching a block; the default is
    /// <see cref="DefaultRowCacheBytes"/>.
    /// </summary>
    public long RowCacheBytes { get; }

    /// <summary>
    /// The RocksDB native library the process runs: <c>glibc</c> (librocksdb.so) or <c>jemalloc</c>
    /// (librocksdb-jemalloc.so, for a process started with libjemalloc.so.2 preloaded); see
    /// <see cref="RocksDbNative"/>. Process-wide, chosen by the first store opened.
    /// </summary>
    public string NativeLibrary { get; }

    /// <summary>The build <see cref="NativeLibrary"/> names; glibc when it names none (the validator refuses that first).</summary>
    internal RocksDbLibrary Library => RocksDbNative.TryParse(NativeLibrary, out var library) ? library : RocksDbLibrary.Glibc;

    /// <summary>The effective configuration, e.g. "MaxDocumentBytes=64 MiB, SyncWrites=true, ...".</summary>
    public override string ToString()
    {
        var cache = BlockCacheBytes == 0 ? "0 B (none)" : ByteSize.FormatExact(BlockCacheBytes);
        return string.Create(
            CultureInfo.InvariantCulture,
            $"MaxDocumentBytes={ByteSize.FormatExact(MaxDocumentBytes)}, SyncWrites={(SyncWrites ? "true" : "false")}, " +
            $"BlockCacheBytes={cache}, RowCacheBytes={(RowCacheBytes == 0 ? "0 B (none)" : ByteSize.FormatExact(RowCacheBytes))}, DirectReads={(DirectReads ? "true" : "false")}, " +
            $"TombstonePurgeInterval={FormatInterval(TombstonePurgeInterval)}, NativeLibrary={Library.ToName()}");
    }

    internal static string FormatInterval(TimeSpan interval) =>
        interval.TotalSeconds >= 1
            ? string.Create(CultureInfo.InvariantCulture, $"{interval.TotalSeconds:0.###} s")
            : string.Create(CultureInfo.InvariantCulture, $"{interval.TotalMilliseconds:0.###} ms");
}

/// <summary>
/// The rules of <see cref="StoreOptions"/>: each problem names the setting by its place in the options tree
/// (<see cref="StoreOptions.MaxDocumentBytesName"/> and so on), its value,
/// the range and the default. Run by <see cref="DocumentStore.Open"/>.
/// </summary>
internal sealed class StoreOptionsValidator : IValidateOptions<StoreOptions>
{
    public ValidateOptionsResult Validate(string? name, StoreOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var problems = new OptionProblems();
        Bytes(problems, options.MaxDocumentBytes, StoreOptions.MaxDocumentBytesName,
            options.MaxDocumentBytes is >= StoreOptions.MaxDocumentBytesFloor and <= StoreOptions.MaxDocumentBytesCeiling,
            $"from {ByteSize.Format(StoreOptions.MaxDocumentBytesFloor)} to {ByteSize.Format(StoreOptions.MaxDocumentBytesCeiling)}",
            StoreOptions.DefaultMaxDocumentBytes);
        Cache(problems, options.BlockCacheBytes, StoreOptions.BlockCacheBytesName, "block cache", StoreOptions.DefaultBlockCacheBytes);
        Cache(problems, options.RowCacheBytes, StoreOptions.RowCacheBytesName, "row cache", StoreOptions.DefaultRowCacheBytes);
        problems.Require(
            RocksDbNative.TryParse(options.NativeLibrary, out _),
            $"{StoreOptions.NativeLibraryName} is {MessageText.Quote(options.NativeLibrary)}; it must be glibc (librocksdb.so, the default) or jemalloc " +
            "(librocksdb-jemalloc.so, with the process started under LD_PRELOAD=libjemalloc.so.2).");
        var interval = options.TombstonePurgeInterval;
        var intervalName = StoreOptions.TombstonePurgeIntervalName;
        problems.Require(
            interval >= StoreOptions.TombstonePurgeIntervalFloor && interval <= StoreOptions.TombstonePurgeIntervalCeiling,
            $"{intervalName} is {StoreOptions.FormatInterval(interval)}; it must be from {StoreOptions.FormatInterval(StoreOptions.TombstonePurgeIntervalFloor)} " +
            $"to {StoreOptions.FormatInterval(StoreOptions.TombstonePurgeIntervalCeiling)}. " +
            $"Set {intervalName} within that range, or leave it out for the default of {StoreOptions.FormatInterval(StoreOptions.DefaultTombstonePurgeInterval)}.");
        return problems.Result;
    }

    private static void Cache(OptionProblems problems, long value, string name, string what, long defaultValue) =>
        Bytes(problems, value, name, value == 0 || value is >= StoreOptions.BlockCacheBytesFloor and <= StoreOptions.BlockCacheBytesCeiling,
            $"0 (no {what}) or from {ByteSize.Format(StoreOptions.BlockCacheBytesFloor)} to {ByteSize.Format(StoreOptions.BlockCacheBytesCeiling)}",
            defaultValue);

    private static void Bytes(OptionProblems problems, long value, string name, bool valid, string allowed, long defaultValue) =>
        problems.Require(valid,
            $"{name} is {ByteSize.FormatExact(value)}; it must be {allowed}. " +
            $"Set {name} within that range, or leave it out for the default of {ByteSize.Format(defaultValue)}.");
}
