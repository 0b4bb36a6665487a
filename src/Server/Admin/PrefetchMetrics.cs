using System.Diagnostics.Metrics;
using Indexing.Prefetcher;
using Prometheus;

namespace Indexing.Server.Admin;

/// <summary>
/// Publishes the pressure of every registered prefetch as System.Diagnostics.Metrics instruments
/// (meter <see cref="MeterName"/>, one time series per prefetch, tagged with its name and strategy)
/// and the process's memory (meter <see cref="MemoryMeterName"/>, untagged, from the <see cref="MemoryMonitor"/>),
/// so dotnet-counters and any OpenTelemetry listener see them, and exposes the same instruments in a
/// prometheus-net registry for <c>GET /metrics</c>.
/// <para>
/// The instruments are observable (read when a listener asks), which fits pressure snapshots. The
/// bridge to Prometheus is a MeterListener of our own, read before each scrape: prometheus-net
/// 8.2.1's MeterAdapter only forwards measurements that are pushed to it and never asks observable
/// instruments for theirs, so through it /metrics stays empty. prometheus-net still writes the text.
/// Each server has its own Meter and CollectorRegistry rather than the static default registry: two
/// servers in one process (the tests) would otherwise publish each other's series.
/// </para>
/// <para>Threading: scrapes may run concurrently; one lock serialises reading the instruments.</para>
/// </summary>
internal sealed class PrefetchMetrics : IDisposable
{
    public const string MeterName = "Indexing.Prefetch";

    private static readonly string[] _labelNames = ["prefetch", "strategy"];

    /// <summary>The meter of the process-wide memory gauges (no labels): RSS, GC heap, RocksDB, Lucene, prefetch bytes.</summary>
    public const string MemoryMeterName = "Indexing.Memory";

    private readonly PrefetchRegistry _registry;
    private readonly Meter _meter = new(MeterName);
    private readonly Meter _memoryMeter = new(MemoryMeterName);
    private readonly MeterListener _listener = new();
    private readonly Dictionary<Instrument, Gauge> _gauges = [];
    private readonly Dictionary<Instrument, Counter> _counters = [];
    private readonly HashSet<(Instrument Instrument, string Prefetch, string Strategy)> _seen = [];
    private readonly HashSet<(Instrument Instrument, string Prefetch, string Strategy)> _previous = [];
    private readonly Lock _scrapeLock = new();
    private bool _disposed;

    public PrefetchMetrics(PrefetchRegistry registry, MemoryMonitor? memory = null)
    {
        _registry = registry;
        Registry = Metrics.NewCustomRegistry();
        var factory = Metrics.WithCustomRegistry(Registry);

        AddGauge("indexing.prefetch.concurrency", "{read}", "Reads running now.", p => p.Concurrency);
        AddGauge("indexing.prefetch.concurrency_limit", "{read}", "Reads allowed at once now (L, set by the controller).", p => p.ConcurrencyLimit);
        AddGauge("indexing.prefetch.throughput", "MB/s", "Bytes read per second over the last second, in decimal MB.", p => p.MegabytesPerSecondLastSecond);
        AddGauge("indexing.prefetch.in_flight_bytes", "By", "Bytes reserved by reads running now.", p => p.InFlightBytes);
        AddGauge("indexing.prefetch.buffered_bytes", "By", "Bytes read and not yet taken by the indexer.", p => p.BufferedBytes);
        AddGauge("indexing.prefetch.budget_bytes", "By", "Byte budget: in flight plus buffered never exceed it.", p => p.BudgetBytes);
        AddGauge("indexing.prefetch.consumer_wait_percent", "%", "Share of the last 10 s the indexer waited for documents.", p => p.ConsumerWaitPercent);
        AddGauge("indexing.prefetch.foreground_p99", "s", "Foreground Get p99 over the last second (0 when not watched or no Gets).",
            p => p.ForegroundP99?.TotalSeconds ?? 0);
        AddGauge("indexing.prefetch.document_size_p99_bytes", "By", "p99 of recent document sizes.", p => p.DocumentSizeP99Bytes);
        _meter.CreateObservableCounter(
            "indexing.prefetch.documents_done", () => Measure(p => p.DocumentsDone), "{document}", "Documents the indexer took so far.");
        _meter.CreateObservableCounter(
            "indexing.prefetch.bytes_done", () => Measure(p => p.BytesDone), "By", "Document bytes the indexer took so far.");

        if (memory is not null)
        {
            AddMemoryInstruments(memory);
        }

        _listener.InstrumentPublished = (instrument, listener) =>
        {
            if (!ReferenceEquals(instrument.Meter, _meter) && !ReferenceEquals(instrument.Meter, _memoryMeter))
            {
                return;
            }

            // Prometheus names: dots become underscores; counters are counters, everything else a gauge.
            // Prefetch series carry the prefetch and strategy labels; memory series none.
            var name = instrument.Name.Replace('.', '_');
            var help = $"{instrument.Description} ({instrument.Unit})";
            string[] labels = ReferenceEquals(instrument.Meter, _meter) ? _labelNames : [];
            if (instrument is ObservableCounter<long>)
            {
                _counters[instrument] = factory.CreateCounter(name, help, labels);
            }
            else
            {
                _gauges[instrument] = factory.CreateGauge(name, help, labels);
            }

            listener.EnableMeasurementEvents(instrument);
        };
        _listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) => Record(instrument, value, tags));
        _listener.SetMeasurementEventCallback<double>((instrument, value, tags, _) => Record(instrument, value, tags));
        _listener.Start();
        Registry.AddBeforeCollectCallback(ReadInstruments);
    }

    /// <summary>The registry <c>GET /metrics</c> exposes.</summary>
    public CollectorRegistry Registry { get; }

    public void Dispose()
    {
        lock (_scrapeLock)
        {
            _disposed = true;
        }

        _listener.Dispose();
        _meter.Dispose();
        _memoryMeter.Dispose();
    }

    // Before each scrape: read every instrument now, then drop the series of prefetches that are
    // gone, so a finished rebuild does not linger in /metrics with its last values.
    private void ReadInstruments()
    {
        lock (_scrapeLock)
        {
            if (_disposed)
            {
                return;
            }

            _seen.Clear();
            _listener.RecordObservableInstruments();
            foreach (var (instrument, prefetch, strategy) in _previous.Except(_seen))
            {
                if (_gauges.TryGetValue(instrument, out var gauge))
                {
                    gauge.RemoveLabelled(prefetch, strategy);
                }
                else
                {
                    _counters[instrument].RemoveLabelled(prefetch, strategy);
                }
            }

            _previous.Clear();
            _previous.UnionWith(_seen);
        }
    }

    private void Record(Instrument instrument, double value, ReadOnlySpan<KeyValuePair<string, object?>> tags)
    {
        if (tags.Length == 0)
        {
            // A memory series: one per process, never removed.
            if (_gauges.TryGetValue(instrument, out var unlabelled))
            {
                unlabelled.Set(value);
            }
            else
            {
                _counters[instrument].IncTo(value);
            }

            return;
        }

        // Measure() always tags in this order: prefetch, strategy.
        var prefetch = (string)tags[0].Value!;
        var strategy = (string)tags[1].Value!;
        _seen.Add((instrument, prefetch, strategy));
        if (_gauges.TryGetValue(instrument, out var gauge))
        {
            gauge.WithLabels(prefetch, strategy).Set(value);
        }
        else
        {
            _counters[instrument].WithLabels(prefetch, strategy).IncTo(value);
        }
    }

    // The memory monitor's latest sample as gauges and counters (read at each scrape; a second old at most).
    private void AddMemoryInstruments(MemoryMonitor memory)
    {
        void Gauge(string name, string unit, string description, Func<MemorySample, long> read) =>
            _memoryMeter.CreateObservableGauge(name, () => read(memory.Latest), unit, description);
        void Counter(string name, string description, Func<MemorySample, long> read) =>
            _memoryMeter.CreateObservableCounter(name, () => read(memory.Latest), "{lookup}", description);

        Gauge("indexing.process.resident_bytes", "By", "Resident set size of the process (VmRSS).", s => s.ResidentBytes);
        Gauge("indexing.process.gc_heap_bytes", "By", "Managed bytes allocated and not yet collected.", s => s.GcHeapBytes);
        Gauge("indexing.process.gc_committed_bytes", "By", "Memory the .NET GC has committed.", s => s.GcCommittedBytes);
        Gauge("indexing.process.threads", "{thread}", "Threads of the process.", s => s.Threads);
        Gauge("indexing.process.open_files", "{file}", "Open file descriptors of the process.", s => s.OpenFiles);
        Gauge("indexing.rocksdb.block_cache_bytes", "By", "Bytes in RocksDB's block cache.", s => s.Store.BlockCacheUsageBytes);
        Gauge("indexing.rocksdb.block_cache_pinned_bytes", "By", "Block cache bytes pinned by readers.", s => s.Store.BlockCachePinnedBytes);
        Gauge("indexing.rocksdb.row_cache_bytes", "By", "Bytes in RocksDB's row cache.", s => s.Store.RowCacheUsageBytes);
        Gauge("indexing.rocksdb.memtable_bytes", "By", "Bytes in RocksDB's memtables.", s => s.Store.MemtableBytes);
        Gauge("indexing.rocksdb.table_readers_bytes", "By", "Memory of RocksDB's SST readers outside the block cache.", s => s.Store.TableReadersBytes);
        Gauge("indexing.lucene.ram_buffer_bytes", "By", "Bytes the index writers buffer in RAM.", s => s.LuceneRamBufferBytes);
        Gauge("indexing.prefetch.held_bytes", "By", "Document bytes every running prefetch holds (in flight + buffered).", s => s.PrefetchHeldBytes);
        Counter("indexing.rocksdb.foreground_block_cache_hits", "Block cache hits of foreground Gets.", s => s.Store.ForegroundBlockCache.Hits);
        Counter("indexing.rocksdb.foreground_block_cache_misses", "Block cache misses of foreground Gets.", s => s.Store.ForegroundBlockCache.Misses);
        Counter("indexing.rocksdb.row_cache_hits", "Row cache hits of point reads.", s => s.Store.RowCache.Hits);
        Counter("indexing.rocksdb.row_cache_misses", "Row cache misses of point reads.", s => s.Store.RowCache.Misses);
    }

    private void AddGauge(string name, string unit, string description, Func<PrefetchPressure, double> read) =>
        _meter.CreateObservableGauge(name, () => Measure(read), unit, description);

    private void AddGauge(string name, string unit, string description, Func<PrefetchPressure, long> read) =>
        _meter.CreateObservableGauge(name, () => Measure(read), unit, description);

    private IEnumerable<Measurement<T>> Measure<T>(Func<PrefetchPressure, T> read)
        where T : struct
    {
        var running = _registry.Running;
        var measurements = new Measurement<T>[running.Count];
        for (var i = 0; i < running.Count; i++)
        {
            var pressure = running[i].Source.Pressure;
            measurements[i] = new Measurement<T>(
                read(pressure),
                new KeyValuePair<string, object?>("prefetch", running[i].Name),
                new KeyValuePair<string, object?>("strategy", pressure.Strategy));
        }

        return measurements;
    }
}
