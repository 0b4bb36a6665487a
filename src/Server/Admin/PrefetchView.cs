using System.Text.Json.Serialization;
using Indexing.Engine;
using Indexing.Prefetcher;

namespace Indexing.Server.Admin;

/// <summary>One prefetch, running or finished, as <c>GET /admin/prefetch</c> and the SSE stream show it.</summary>
/// <param name="Name">The name it was registered under.</param>
/// <param name="Limits">Its live limits; null for the fixed baselines, which have none, and for a finished one.</param>
/// <param name="Pressure">Its latest pressure snapshot (a finished one's final), history and recent decisions included.</param>
/// <param name="FinishedAt">When a finished one ended (its pressure's state says how); absent for a running one.</param>
internal sealed record PrefetchView(
    string Name,
    PrefetchLimits? Limits,
    PrefetchPressure Pressure,
    [property: JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] DateTimeOffset? FinishedAt = null)
{
    public static PrefetchView Of(PrefetchPressure prefetch) => new(prefetch.Name, prefetch.Limits, prefetch);

    /// <summary>A finished prefetch: its final pressure, stamped with when it ended.</summary>
    public static PrefetchView OfFinished(PrefetchPressure prefetch) => new(prefetch.Name, null, prefetch, prefetch.Timestamp);

    public static IReadOnlyList<PrefetchView> Of(IndexingEngine engine) => [.. engine.ListPrefetches().Select(Of)];

    /// <summary>The engine's last finished prefetches, newest first.</summary>
    public static IReadOnlyList<PrefetchView> FinishedOf(IndexingEngine engine) => [.. engine.ListFinishedPrefetches().Select(OfFinished)];
}
