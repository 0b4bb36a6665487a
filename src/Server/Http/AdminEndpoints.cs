using System.Net.ServerSentEvents;
using System.Runtime.CompilerServices;
using System.Text.Json;
using System.Text.Json.Serialization;
using Indexing.Engine;
using Indexing.Server.Admin;
using Indexing.Server.Hosting;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using Prometheus;

namespace Indexing.Server.Http;

/// <summary>
/// The admin surface: prefetch pressure as JSON and as server-sent events, live limits, rebuild
/// progress, Prometheus text at <c>/metrics</c>, and the HTML page that draws all of it.
/// </summary>
internal static class AdminEndpoints
{
    public static readonly TimeSpan StreamInterval = TimeSpan.FromSeconds(1);

    public static void Map(WebApplication app, IndexingEngine engine, RebuildBoard rebuilds, PrefetchMetrics metrics, MemoryMonitor memory, ApiKeyGate? login)
    {
        app.MapGet("/admin", () => AdminPage.Serve("admin.html"));
        app.MapGet("/admin/assets/{file}", (string file) => AdminPage.Serve(file));
        if (login is not null)
        {
            app.MapPost(ApiKeyGate.LoginPath, (Func<HttpContext, Task<IResult>>)login.LoginAsync).Require(ContentTypes.Form);
        }

        app.MapGet("/admin/prefetch", () => TypedResults.Ok(PrefetchList.Of(engine)));
        app.MapGet("/admin/prefetch/stream", (IHostApplicationLifetime lifetime, CancellationToken requestAborted) =>
                TypedResults.ServerSentEvents(Snapshots(engine, lifetime.ApplicationStopping, requestAborted)))
            .RequireRateLimiting(RequestLimits.EventStreams);
        app.MapPut("/admin/prefetch/limits", (HttpRequest request, CancellationToken cancellationToken) =>
                UpdateLimitsAsync(request, engine, cancellationToken))
            .Require(ContentTypes.Json);
        app.MapGet("/admin/rebuilds", () => TypedResults.Ok(new RebuildList(rebuilds.Read())));
        app.MapGet("/admin/memory", (double? after) => TypedResults.Ok(MemoryHistory.Of(memory, after)));
        app.MapMetrics("/metrics", metrics.Registry);
    }

    // One snapshot at once (the page draws without waiting), then one a second. Ends without an
    // error when the client goes away, and when the server stops: an open stream must not hold up
    // graceful shutdown until its timeout.
    private static async IAsyncEnumerable<SseItem<PrefetchList>> Snapshots(
        IndexingEngine engine, CancellationToken stopping, [EnumeratorCancellation] CancellationToken requestAborted)
    {
        using var linked = CancellationTokenSource.CreateLinkedTokenSource(stopping, requestAborted);
        using var timer = new PeriodicTimer(StreamInterval);
        do
        {
            yield return new SseItem<PrefetchList>(PrefetchList.Of(engine), "pressure");
        }
        while (await NextTickAsync(timer, linked.Token).ConfigureAwait(false));
    }

    private static async Task<bool> NextTickAsync(PeriodicTimer timer, CancellationToken cancellationToken)
    {
        try
        {
            return await timer.WaitForNextTickAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            return false;
        }
    }

    private static async Task<IResult> UpdateLimitsAsync(HttpRequest request, IndexingEngine engine, CancellationToken cancellationToken)
    {
        JsonDocument document;
        try
        {
            document = await JsonDocument.ParseAsync(request.Body, default, cancellationToken).ConfigureAwait(false);
        }
        catch (BadHttpRequestException e) when (e.StatusCode == StatusCodes.Status413PayloadTooLarge)
        {
            return ProblemResults.TooLarge($"the body is over the {ByteSize.Format(ServerHost.SmallBodyBytes)} a small JSON request may have; a limits change is a few dozen bytes.");
        }
        catch (JsonException e)
        {
            return ProblemResults.BadRequest("Malformed JSON",
                $"the body is not well-formed JSON at line {(e.LineNumber ?? 0) + 1}, byte {(e.BytePositionInLine ?? 0) + 1}; " +
                "send an object such as {\"maxMegabytesPerSecond\": 50, \"maxConcurrency\": 4, \"budget\": \"128MiB\"}.");
        }

        using (document)
        {
            if (!LimitsChange.TryParse(document.RootElement, out var change, out var problem))
            {
                return ProblemResults.BadRequest("Invalid prefetch limits", problem);
            }

            var targets = change.Prefetch is { } name
                ? engine.GetPrefetch(name) is { } found ? [found] : null
                : engine.ListPrefetches().Where(r => r.Limits is not null).ToList();
            if (targets is null)
            {
                return ProblemResults.NotFound("Unknown prefetch",
                    $"no prefetch named {MessageText.Quote(change.Prefetch)} is running; GET /admin/prefetch lists the running ones.");
            }

            if (targets.Count == 0 || targets.Any(t => t.Limits is null))
            {
                return ProblemResults.Conflict("No adaptive prefetch",
                    change.Prefetch is null
                        ? "no adaptive prefetch is running; limits apply live only to adaptive prefetches."
                        : $"prefetch {MessageText.Quote(change.Prefetch)} uses the {targets[0].Strategy} strategy, whose reads are fixed; " +
                          "limits apply live only to adaptive prefetches.");
            }

            var applied = new List<PrefetchView>(targets.Count);
            foreach (var target in targets)
            {
                Prefetcher.PrefetchPressure? updated;
                try
                {
                    updated = engine.UpdatePrefetchLimits(target.Name, change.Apply(target.Limits!));
                }
                catch (OptionsValidationException e)
                {
                    // The prefetcher's own rules (e.g. concurrency above the maximum it started with).
                    return ProblemResults.BadRequest("Invalid prefetch limits",
                        $"prefetch {MessageText.Quote(target.Name)} refused the limits: {e.Message}" +
                        (applied.Count > 0 ? $" The limits were applied to {string.Join(", ", applied.Select(a => MessageText.Quote(a.Name)))} before it." : string.Empty));
                }
                catch (InvalidOperationException e)
                {
                    // The name now belongs to a prefetch with a fixed strategy (the adaptive one ended meanwhile).
                    return ProblemResults.Conflict("No adaptive prefetch", e.Message);
                }

                // Null: it finished between the lookup and now, nothing left to limit.
                if (updated is not null)
                {
                    applied.Add(PrefetchView.Of(updated));
                }
            }

            return TypedResults.Ok(new PrefetchList(applied));
        }
    }
}

/// <summary>
/// The body of <c>GET /admin/prefetch</c> and of each SSE event: the running prefetches and, below them, the
/// last few finished ones as they ended (<see cref="IndexingEngine.ListFinishedPrefetches"/>). A limits
/// change answers with the prefetches it changed alone, without <paramref name="Finished"/>.
/// </summary>
internal sealed record PrefetchList(
    IReadOnlyList<PrefetchView> Prefetches,
    [property: JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] IReadOnlyList<PrefetchView>? Finished = null)
{
    public static PrefetchList Of(IndexingEngine engine)
    {
        // Running first: a prefetch ending between the two reads then shows in both for a second, never in neither.
        var running = PrefetchView.Of(engine);
        return new(running, PrefetchView.FinishedOf(engine));
    }
}

/// <summary>
/// The body of <c>GET /admin/memory[?after=SECONDS]</c>: the latest sample, the samples after that many
/// seconds since the server started (all ten minutes without it), and what bounds the process's memory.
/// </summary>
internal sealed record MemoryHistory(MemorySample Latest, IReadOnlyList<MemorySample> History, MemoryBound Bound, string Malloc, string? RocksDbLibrary, string? LastError)
{
    public static MemoryHistory Of(MemoryMonitor memory, double? afterSeconds) => new(
        memory.Latest,
        memory.History(afterSeconds is { } seconds && double.IsFinite(seconds) ? AfterSample(seconds) : null),
        memory.Bound,
        memory.Malloc,
        memory.RocksDbLibraryPath,
        memory.LastError);

    // Clients pass back a sample's elapsed time as seconds: rounded to the tick the sample was written
    // with, so "after" that sample excludes it (TimeSpan.FromSeconds can land one tick short of it).
    private static TimeSpan AfterSample(double seconds) =>
        TimeSpan.FromTicks((long)Math.Round(Math.Clamp(seconds, 0, TimeSpan.MaxValue.TotalSeconds / 2) * TimeSpan.TicksPerSecond));
}

/// <summary>The body of <c>GET /admin/rebuilds</c>.</summary>
internal sealed record RebuildList(IReadOnlyList<RebuildBar> Rebuilds);
