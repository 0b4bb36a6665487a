using System.Globalization;

namespace Indexing.Server.Hosting;

/// <summary>
/// What one server gives its clients at most, from the <c>Server:</c> settings (validated in
/// <see cref="ServerOptions.Bind"/>): query time, queries at once and waiting, how far a pattern term
/// expands, sort keys per query, admin event streams, TCP connections. Fixed at start.
/// </summary>
/// <param name="QueryTimeout">Server:QueryTimeout: past it a query stops (503 problem details).</param>
/// <param name="MaxConcurrentQueries">Server:MaxConcurrentQueries: queries running at once.</param>
/// <param name="QueryQueueLength">Server:QueryQueueLength: queries waiting for one of those; more get 429.</param>
/// <param name="MaxQueryTerms">Server:MaxQueryTerms: terms one prefix, wildcard or regex term may expand to.</param>
/// <param name="MaxSortKeys">Server:MaxSortKeys: sort keys one query may have.</param>
/// <param name="MaxEventStreams">Server:MaxEventStreams: open <c>/admin/prefetch/stream</c> streams; more get 429.</param>
/// <param name="MaxConnections">Server:MaxConnections: open TCP connections; Kestrel closes the ones past it at once.</param>
/// <param name="MinResponseBytesPerSecond">
/// Server:MinResponseBytesPerSecond: Kestrel's minimum response data rate. Kestrel gives every byte
/// written 1/rate seconds (and each write at least <see cref="ResponseGracePeriod"/>) and adds them
/// up, so the rate is an average over the answer: a client that stops reading is cut off about
/// (bytes already in its socket buffers and Kestrel's) / rate after it stopped, and frees what its
/// request held.
/// </param>
internal sealed record HttpLimits(
    TimeSpan QueryTimeout, int MaxConcurrentQueries, int QueryQueueLength, int MaxQueryTerms, int MaxSortKeys, int MaxEventStreams, int MaxConnections,
    int MinResponseBytesPerSecond = HttpLimits.DefaultMinResponseBytesPerSecond)
{
    // Kestrel's default is 240 bytes/s, which lets a 64 MiB answer take 78 hours, and a client that
    // stalls after its socket buffers took a few MiB hold its request for hours: 16 KiB/s (128 kbit/s)
    // still lets a 64 MiB document take over an hour, and cuts a stalled reader within minutes.
    public const int DefaultMinResponseBytesPerSecond = 16 << 10;

    /// <summary>Kestrel's grace: a write may take this long whatever its size (Kestrel's default for requests and answers).</summary>
    public static readonly TimeSpan ResponseGracePeriod = TimeSpan.FromSeconds(5);

    public static readonly TimeSpan DefaultQueryTimeout = TimeSpan.FromSeconds(10);
    public const int DefaultQueryQueueLength = 32;
    public const int DefaultMaxEventStreams = 100;
    public const int DefaultMaxConnections = 1000;

    /// <summary>Twice the processor count: queries are CPU-bound, and one may wait on I/O while another runs.</summary>
    public static int DefaultMaxConcurrentQueries => 2 * Environment.ProcessorCount;

    public override string ToString() => string.Create(
        CultureInfo.InvariantCulture,
        $"query timeout {QueryTimeout.TotalSeconds:0.###} s, {MaxConcurrentQueries} queries at once + {QueryQueueLength} waiting, " +
        $"{MaxQueryTerms} terms per pattern, {MaxSortKeys} sort keys, {MaxEventStreams} event streams, {MaxConnections} connections, " +
        $"answers read at {MinResponseBytesPerSecond} bytes/s at least");
}
