using System.Diagnostics.Metrics;
using Indexing.Engine;
using Indexing.Prefetcher;
using Prometheus;

namespace Indexing.Server.Admin;

/// <summary>
/// Publishes the pressure of every registered prefetch and the process's memory as
/// System.Diagnostics.Metrics instruments of one meter, <see cref="MeterName"/>, so dotnet-counters
/// and any OpenTelemetry listener see them; prometheus-net's <see cref="MeterAdapter"/> turns the
/// same instruments into the registry <c>GET /metrics</c> exposes. Prefetch series are tagged with
/// the prefetch's name and strategy (one series per prefetch), memory series are untagged.
/// <para>
/// The instruments are observable: the adapter reads them before each scrape, so the text is
/// current. Prometheus names are the meter's and the instrument's, lower case, dots as
/// underscores: <c>prefetch.concurrency</c> is <c>indexing_prefetch_concurrency</c>. The adapter
/// writes every instrument as a gauge, counters included (a .NET counter may be recreated and
/// start again from zero), and forgets a series <see cref="SeriesExpireAfter"/> after its last
/// reading, which is how a finished prefetch leaves /metrics. Each server has its own Meter and
/// CollectorRegistry rather than the static default registry: two servers in one process (the
/// tests) would otherwise publish each other's series.
/// </para>
/// </summary>
internal sealed class PrefetchMetrics : IDisposable
{
    /// <summary>The meter of every instrument: prefetch pressure (tagged) and process memory (untagged).</summary>
    public const string MeterName = "Indexing";

    /// <summary>How long a series stays in /metrics after its last reading (a prefetch that ended is read no more).</summary>
    public static readonly TimeSpan SeriesExpireAfter = TimeSpan.FromSeconds(10);

    private readonly IndexingEngine _engine;
    private readonly Meter _meter = new(MeterName);
    private readonly IDisposable _adapter;

    public PrefetchMetrics(IndexingEngine engine, MemoryMonitor? memory = null)
    {
        _engine = engine;
        Registry = Metrics.NewCustomRegistry();

        AddGauge("prefetch.concurrency", "{read}", "Reads running now.", p => p.Concurrency);
        AddGauge("prefetch.concurrency_limit", "{read}", "Reads allowed at once now (L, set by the controller).", p => p.ConcurrencyLimit);
        AddGauge("prefetch.throughput", "MB/s", "Bytes read per second over the last second, in decimal MB.", p => p.MegabytesPerSecondLastSecond);
        AddGauge("prefetch.in_flight_bytes", "By", "Bytes reserved by reads running now.", p => p.InFlightBytes);
        AddGauge("prefetch.buffered_bytes", "By", "Bytes read and not yet taken by the indexer.", p => p.BufferedBytes);
        AddGauge("prefetch.budget_bytes", "By", "Byte budget: in flight plus buffered never exceed it.", p => p.BudgetBytes);
        AddGauge("prefetch.consumer_wait_percent", "%", "Share of the last 10 s the indexer waited for documents.", p => p.ConsumerWaitPercent);
        AddGauge("prefetch.foreground_p99", "s", "Foreground Get p99 over the last second (0 when not watched or no Gets).",
            p => p.ForegroundP99?.TotalSeconds ?? 0);
        AddGauge("prefetch.document_size_p99_bytes", "By", "p99 of recent document sizes.", p => p.DocumentSizeP99Bytes);
        _meter.CreateObservableCounter(
            "prefetch.documents_done", () => Measure(p => p.DocumentsDone), "{document}", "Documents the indexer took so far.");
        _meter.CreateObservableCounter(
            "prefetch.bytes_done", () => Measure(p => p.BytesDone), "By", "Document bytes the indexer took so far.");

        if (memory is not null)
        {
            AddMemoryInstruments(memory);
        }

        // Only this server's meter: other meters in the process (ASP.NET Core's, another server's) stay out.
        _adapter = MeterAdapter.StartListening(new MeterAdapterOptions
        {
            // Both: the registry gets the adapter's scrape hook, the factory the metrics (its default is the static one's).
            Registry = Registry,
            MetricFactory = Metrics.WithCustomRegistry(Registry),
            InstrumentFilterPredicate = instrument => ReferenceEquals(instrument.Meter, _meter),
            MetricsExpireAfter = SeriesExpireAfter,
        });
    }

    /// <summary>The registry <c>GET /metrics</c> exposes.</summary>
    public CollectorRegistry Registry { get; }

    public void Dispose()
    {
        _adapter.Dispose();
        _meter.Dispose();
    }

    // The memory monitor's latest sample as gauges and counters (read at each scrape; a second old at most).
    private void AddMemoryInstruments(MemoryMonitor memory)
    {
        void Gauge(string name, string unit, string description, Func<MemorySample, long> read) =>
            _meter.CreateObservableGauge(name, () => read(memory.Latest), unit, description);
        void Counter(string name, string unit, string description, Func<MemorySample, long> read) =>
            _meter.CreateObservableCounter(name, () => read(memory.Latest), unit, description);

        Gauge("process.resident_bytes", "By", "Resident set size of the process (VmRSS).", s => s.ResidentBytes);
        Gauge("process.private_bytes", "By", "The resident memory the process alone owns (RssAnon + RssShmem); what the memory bound is about.", s => s.PrivateBytes);
        Gauge("process.mapped_file_bytes", "By", "The resident pages of mapped files (RssFile): Lucene's index segments; reclaimable page cache.", s => s.MappedFileBytes);
        Gauge("process.gc_heap_bytes", "By", "Managed bytes allocated and not yet collected.", s => s.GcHeapBytes);
        Gauge("process.gc_committed_bytes", "By", "Memory the .NET GC has committed.", s => s.GcCommittedBytes);
        Gauge("process.threads", "{thread}", "Threads of the process.", s => s.Threads);
        Gauge("process.open_files", "{file}", "Open file descriptors of the process.", s => s.OpenFiles);
        Gauge("rocksdb.block_cache_bytes", "By", "Bytes in RocksDB's block cache.", s => s.Store.BlockCacheUsageBytes);
        Gauge("rocksdb.block_cache_pinned_bytes", "By", "Block cache bytes pinned by readers.", s => s.Store.BlockCachePinnedBytes);
        Gauge("rocksdb.row_cache_bytes", "By", "Bytes in RocksDB's row cache.", s => s.Store.RowCacheUsageBytes);
        Gauge("rocksdb.memtable_bytes", "By", "Bytes in RocksDB's memtables.", s => s.Store.MemtableBytes);
        Gauge("rocksdb.table_readers_bytes", "By", "Memory of RocksDB's SST readers outside the block cache.", s => s.Store.TableReadersBytes);
        Gauge("lucene.ram_buffer_bytes", "By", "Bytes the index writers buffer in RAM.", s => s.LuceneRamBufferBytes);
        Gauge("prefetch.held_bytes", "By", "Document bytes every running prefetch holds (in flight + buffered).", s => s.PrefetchHeldBytes);
        Counter("rocksdb.foreground_block_cache_hits", "{lookup}", "Block cache hits of foreground Gets.", s => s.Store.ForegroundBlockCache.Hits);
        Counter("rocksdb.foreground_block_cache_misses", "{lookup}", "Block cache misses of foreground Gets.", s => s.Store.ForegroundBlockCache.Misses);
        Counter("rocksdb.row_cache_hits", "{lookup}", "Row cache hits of point reads.", s => s.Store.RowCache.Hits);
        Counter("rocksdb.row_cache_misses", "{lookup}", "Row cache misses of point reads.", s => s.Store.RowCache.Misses);
        Counter("rocksdb.file_read_bytes", "By", "Bytes RocksDB read from its SST and blob files, readahead included; over the bytes the reads returned, their read amplification.", s => s.Store.FileBytesRead);
    }

    private void AddGauge(string name, string unit, string description, Func<PrefetchPressure, double> read) =>
        _meter.CreateObservableGauge(name, () => Measure(read), unit, description);

    private void AddGauge(string name, string unit, string description, Func<PrefetchPressure, long> read) =>
        _meter.CreateObservableGauge(name, () => Measure(read), unit, description);

    private IEnumerable<Measurement<T>> Measure<T>(Func<PrefetchPressure, T> read)
        where T : struct
    {
        IReadOnlyList<PrefetchPressure> running;
        try
        {
            running = _engine.ListPrefetches();
        }
        catch (ObjectDisposedException)
        {
            // A scrape while the server closes: the engine has no prefetch left.
            return [];
        }

        var measurements = new Measurement<T>[running.Count];
        for (var i = 0; i < running.Count; i++)
        {
            var pressure = running[i];
            measurements[i] = new Measurement<T>(
                read(pressure),
                new KeyValuePair<string, object?>("prefetch", running[i].Name),
                new KeyValuePair<string, object?>("strategy", pressure.Strategy));
        }

        return measurements;
    }
}
