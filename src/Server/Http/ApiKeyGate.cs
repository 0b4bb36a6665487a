using System.Security.Cryptography;
using System.Text;
using Microsoft.AspNetCore.Http;

namespace Indexing.Server.Http;

/// <summary>
/// When an API key is configured, every write (any method but GET/HEAD/OPTIONS) and every
/// /admin and /metrics request must carry it, as <c>X-Api-Key</c> or <c>Authorization: Bearer</c>.
/// Document reads stay open: the key guards changes and operational detail, as the issue asks.
/// The comparison is constant-time so response timing does not reveal how much of a guess matched.
/// <para>
/// A browser cannot put a header on the admin page's own requests (EventSource has no headers), so
/// the page is opened once as <c>/admin?key=...</c>: a valid key is turned into an HttpOnly,
/// SameSite=Strict cookie scoped to /admin and the browser is redirected to the bare URL. The cookie
/// is honoured for GET /admin/* only, so it can never authorise a change (no cross-site writes).
/// </para>
/// </summary>
internal sealed class ApiKeyGate
{
    private const string HeaderName = "X-Api-Key";
    private const string BearerPrefix = "Bearer ";
    private const string CookieName = "indexing-api-key";
    private const string AdminPath = "/admin";

    private readonly byte[] _key;

    public ApiKeyGate(string key)
    {
        _key = Encoding.UTF8.GetBytes(key);
    }

    public async Task InvokeAsync(HttpContext context, RequestDelegate next)
    {
        var request = context.Request;
        if (HttpMethods.IsGet(request.Method) && request.Path == AdminPath && request.Query.TryGetValue("key", out var key) && Matches(key.ToString()))
        {
            context.Response.Cookies.Append(CookieName, key.ToString(), new CookieOptions
            {
                HttpOnly = true,
                SameSite = SameSiteMode.Strict,
                Path = AdminPath,
                Secure = request.IsHttps,
            });
            context.Response.Redirect(AdminPath);
            return;
        }

        if (!NeedsKey(request) || Matches(Presented(request)) || Matches(AdminPageCookie(request)))
        {
            await next(context).ConfigureAwait(false);
            return;
        }

        var presented = Presented(context.Request) is not null;
        context.Response.Headers.WWWAuthenticate = "Bearer";
        await ProblemResults.Unauthorized(
                presented
                    ? $"the API key sent with {context.Request.Method} {context.Request.Path} is not the configured one (Server:ApiKey); send the server's key."
                    : $"{context.Request.Method} {context.Request.Path} needs the API key (Server:ApiKey): send it as the X-Api-Key header or as Authorization: Bearer <key> (in a browser, open /admin?key=<key> once).")
            .ExecuteAsync(context).ConfigureAwait(false);
    }

    private static bool NeedsKey(HttpRequest request) =>
        !(HttpMethods.IsGet(request.Method) || HttpMethods.IsHead(request.Method) || HttpMethods.IsOptions(request.Method))
        || request.Path.StartsWithSegments("/admin", StringComparison.OrdinalIgnoreCase)
        || request.Path.StartsWithSegments("/metrics", StringComparison.OrdinalIgnoreCase);

    private static string? Presented(HttpRequest request)
    {
        if (request.Headers.TryGetValue(HeaderName, out var header) && header.Count == 1)
        {
            return header[0];
        }

        var authorization = request.Headers.Authorization;
        return authorization.Count == 1 && authorization[0] is { } value && value.StartsWith(BearerPrefix, StringComparison.OrdinalIgnoreCase)
            ? value[BearerPrefix.Length..].Trim()
            : null;
    }

    private static string? AdminPageCookie(HttpRequest request) =>
        HttpMethods.IsGet(request.Method) && request.Path.StartsWithSegments(AdminPath, StringComparison.Ordinal)
            ? request.Cookies[CookieName]
            : null;

    private bool Matches(string? presented) =>
        presented is not null && CryptographicOperations.FixedTimeEquals(Encoding.UTF8.GetBytes(presented), _key);
}
