using System.Globalization;
using System.Threading.RateLimiting;
using Indexing.Server.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.RateLimiting;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;

namespace Indexing.Server.Http;

/// <summary>
/// The caps on work a client can start, as ASP.NET Core rate-limiting policies (concurrency
/// limiters) that endpoints opt into with <c>RequireRateLimiting</c>: <see cref="Queries"/> (queries
/// running at once, with a FIFO queue) and <see cref="EventStreams"/> (admin event streams open at
/// once, no queue: a stream holds its permit until it ends). A refused request gets 429 with
/// <c>Retry-After</c> and problem details naming the setting.
/// </summary>
internal static class RequestLimits
{
    public const string Queries = "queries";
    public const string EventStreams = "event-streams";

    // A query takes milliseconds to seconds; a stream ends when some client closes its page.
    private static readonly TimeSpan _queryRetryAfter = TimeSpan.FromSeconds(1);
    private static readonly TimeSpan _streamRetryAfter = TimeSpan.FromSeconds(10);

    public static void Add(IServiceCollection services, HttpLimits limits)
    {
        services.AddRateLimiter(limiter =>
        {
            limiter.AddConcurrencyLimiter(Queries, queries =>
            {
                queries.PermitLimit = limits.MaxConcurrentQueries;
                queries.QueueLimit = limits.QueryQueueLength;
                queries.QueueProcessingOrder = QueueProcessingOrder.OldestFirst;
            });
            limiter.AddConcurrencyLimiter(EventStreams, streams =>
            {
                streams.PermitLimit = limits.MaxEventStreams;
                streams.QueueLimit = 0;
            });
            limiter.OnRejected = (context, _) => RejectAsync(context.HttpContext, limits);
        });
    }

    private static ValueTask RejectAsync(HttpContext context, HttpLimits limits)
    {
        var policy = context.GetEndpoint()?.Metadata.GetMetadata<EnableRateLimitingAttribute>()?.PolicyName;
        var (retryAfter, title, detail) = policy == EventStreams
            ? (_streamRetryAfter, "Too many event streams",
                $"{limits.MaxEventStreams} admin event streams are open, the most this server keeps ({ServerOptions.MaxEventStreamsSetting}); " +
                "close a page that shows the admin stream, or retry later.")
            : (_queryRetryAfter, "Too many queries",
                $"{limits.MaxConcurrentQueries} queries are running and {limits.QueryQueueLength} waiting, the most this server takes " +
                $"({ServerOptions.MaxConcurrentQueriesSetting}, {ServerOptions.QueryQueueLengthSetting}); retry after the time in Retry-After.");
        context.Response.Headers.RetryAfter = ((int)retryAfter.TotalSeconds).ToString(CultureInfo.InvariantCulture);
        return new ValueTask(ProblemResults.TooManyRequests(title, detail).ExecuteAsync(context));
    }
}
