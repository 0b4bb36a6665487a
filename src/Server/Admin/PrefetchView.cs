using Indexing.Engine;
using Indexing.Prefetcher;

namespace Indexing.Server.Admin;

/// <summary>One registered prefetch as <c>GET /admin/prefetch</c> and the SSE stream show it.</summary>
/// <param name="Name">The name it was registered under.</param>
/// <param name="Limits">Its live limits; null for the fixed baselines, which have none.</param>
/// <param name="Pressure">Its latest pressure snapshot, history and recent decisions included.</param>
internal sealed record PrefetchView(string Name, PrefetchLimits? Limits, PrefetchPressure Pressure)
{
    public static PrefetchView Of(PrefetchPressure prefetch) => new(prefetch.Name, prefetch.Limits, prefetch);

    public static IReadOnlyList<PrefetchView> Of(IndexingEngine engine) => [.. engine.ListPrefetches().Select(Of)];
}
