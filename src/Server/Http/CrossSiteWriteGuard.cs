using Indexing.Storage;
using Microsoft.AspNetCore.Http;

namespace Indexing.Server.Http;

/// <summary>
/// Refuses (403) a state-changing request that a browser sent on behalf of a page from another
/// origin. A loopback server is reachable from every page open in a browser on the same machine,
/// and a form post or a no-cors fetch needs no preflight, so without this any page could store,
/// delete or rebuild.
/// <para>
/// Browsers send <c>Origin</c> with every POST, PUT and DELETE, and recent ones <c>Sec-Fetch-Site</c>
/// too: a request carrying either must come from this server's own origin (scheme and host as the
/// request addressed it; host filtering has already limited the host to this server's names). A
/// request with neither comes from a client that is not a browser (curl, HttpClient, scripts): those
/// cannot be driven by a web page, so they are let through, and the API key, when set, still applies.
/// ASP.NET Core's antiforgery middleware covers form-bound endpoints with tokens, which JSON clients
/// cannot carry; the origin check is OWASP's header-based defence for APIs.
/// </para>
/// </summary>
internal static class CrossSiteWriteGuard
{
    public static async Task InvokeAsync(HttpContext context, RequestDelegate next)
    {
        var request = context.Request;
        if (IsSafe(request.Method) || Refusal(request) is not { } problem)
        {
            await next(context).ConfigureAwait(false);
            return;
        }

        await ProblemResults.Forbidden("Cross-site request refused", problem).ExecuteAsync(context).ConfigureAwait(false);
    }

    private static bool IsSafe(string method) =>
        HttpMethods.IsGet(method) || HttpMethods.IsHead(method) || HttpMethods.IsOptions(method) || HttpMethods.IsTrace(method);

    private static string? Refusal(HttpRequest request)
    {
        var own = $"{request.Scheme}://{request.Host}";
        var what = $"{request.Method} {request.Path}";
        var site = request.Headers["Sec-Fetch-Site"].ToString();
        if (site is "cross-site" or "same-site")
        {
            return $"{what} was sent by a page of another site (Sec-Fetch-Site: {site}); this server accepts changes only from its own pages ({own}) " +
                "and from clients that are not browsers, such as curl.";
        }

        var origin = request.Headers.Origin.ToString();
        if (origin.Length > 0 && !string.Equals(origin, own, StringComparison.OrdinalIgnoreCase))
        {
            return $"{what} was sent by a page from {MessageText.Quote(origin)} (its Origin header); this server accepts changes only from its own pages ({own}) " +
                "and from clients that send no Origin, such as curl.";
        }

        return null;
    }
}
