using System.Diagnostics.Metrics;
using Indexing.Prefetcher;
using Prometheus;

namespace Indexing.Server.Admin;

/// <summary>
/// Publishes the pressure of every registered prefetch as System.Diagnostics.Metrics instruments
/// (meter <see cref="MeterName"/>, one time series per prefetch, tagged with its name and strategy),
/// so dotnet-counters and any OpenTelemetry listener see them, and bridges that meter into a
/// prometheus-net registry that <c>GET /metrics</c> exposes.
/// <para>
/// Each server gets its own Meter and CollectorRegistry rather than prometheus-net's static default
/// registry: two servers in one process (the tests) would otherwise publish each other's series.
/// The adapter reads the observable instruments just before each scrape, so values are current.
/// </para>
/// </summary>
internal sealed class PrefetchMetrics : IDisposable
{
    public const string MeterName = "Indexing.Prefetch";

    private readonly PrefetchRegistry _registry;
    private readonly Meter _meter = new(MeterName);
    private readonly IDisposable _adapter;

    public PrefetchMetrics(PrefetchRegistry registry)
    {
        _registry = registry;
        Gauge("indexing.prefetch.concurrency", "{read}", "Reads running now.", p => p.Concurrency);
        Gauge("indexing.prefetch.concurrency_limit", "{read}", "Reads allowed at once now (L, set by the controller).", p => p.ConcurrencyLimit);
        Gauge("indexing.prefetch.throughput", "MB/s", "Bytes read per second over the last second, in decimal MB.", p => p.MegabytesPerSecondLastSecond);
        Gauge("indexing.prefetch.in_flight_bytes", "By", "Bytes reserved by reads running now.", p => p.InFlightBytes);
        Gauge("indexing.prefetch.buffered_bytes", "By", "Bytes read and not yet taken by the indexer.", p => p.BufferedBytes);
        Gauge("indexing.prefetch.budget_bytes", "By", "Byte budget: in flight plus buffered never exceed it.", p => p.BudgetBytes);
        Gauge("indexing.prefetch.consumer_wait_percent", "%", "Share of the last 10 s the indexer waited for documents.", p => p.ConsumerWaitPercent);
        Gauge("indexing.prefetch.foreground_p99", "s", "Foreground Get p99 over the last second (0 when not watched or no Gets).",
            p => p.ForegroundP99?.TotalSeconds ?? 0);
        Gauge("indexing.prefetch.document_size_p99_bytes", "By", "p99 of recent document sizes.", p => p.DocumentSizeP99Bytes);
        _meter.CreateObservableCounter(
            "indexing.prefetch.documents_done", () => Measure(p => p.DocumentsDone), "{document}", "Documents the indexer took so far.");
        _meter.CreateObservableCounter(
            "indexing.prefetch.bytes_done", () => Measure(p => p.BytesDone), "By", "Document bytes the indexer took so far.");

        Registry = Metrics.NewCustomRegistry();
        _adapter = MeterAdapter.StartListening(new MeterAdapterOptions
        {
            Registry = Registry,
            InstrumentFilterPredicate = instrument => ReferenceEquals(instrument.Meter, _meter),
        });
    }

    /// <summary>The registry <c>GET /metrics</c> exposes.</summary>
    public CollectorRegistry Registry { get; }

    public void Dispose()
    {
        _adapter.Dispose();
        _meter.Dispose();
    }

    private void Gauge(string name, string unit, string description, Func<PrefetchPressure, double> read) =>
        _meter.CreateObservableGauge(name, () => Measure(read), unit, description);

    private void Gauge(string name, string unit, string description, Func<PrefetchPressure, long> read) =>
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
