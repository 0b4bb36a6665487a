using System.Security.Claims;
using System.Security.Cryptography;
using System.Text;
using Indexing.Server.Admin;
using Indexing.Server.Hosting;
using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.Authentication.Cookies;
using Microsoft.AspNetCore.Http;

namespace Indexing.Server.Http;

/// <summary>
/// When an API key is configured (<c>Server:ApiKey</c>), every request must carry a key, as
/// <c>X-Api-Key</c> or <c>Authorization: Bearer</c>, except the sign-in (<c>POST /admin/login</c>, and
/// <c>GET /admin</c>, which answers the sign-in form). The full key opens everything; the read-only
/// key (<c>Server:ReadApiKey</c>, optional) opens reads: GET and HEAD (and OPTIONS) outside
/// <c>/admin</c> and <c>/metrics</c>, i.e. documents, queries and index and rebuild status. A write
/// or admin request carrying only the read key is refused with 403 naming the rule; one without a key,
/// or with another, with 401. Only requests that proved the full key see failure texts
/// (<see cref="CanSeeDetails"/>). Comparisons are constant-time so response timing does not reveal
/// how much of a guess matched. Without a key (a loopback server) every request passes and is trusted.
/// <para>
/// The key never travels in a URL. A browser cannot put a header on the admin page's own requests
/// (EventSource has none), so the page asks for the key in a form (<c>POST /admin/login</c>); the full key
/// signs the browser in with ASP.NET Core's cookie authentication: the cookie is a ticket encrypted by
/// Data Protection (keys in memory: a restart signs everyone out), never the key, HttpOnly,
/// SameSite=Strict, scoped to /admin and honoured for GET /admin/* only, so it can never authorise a
/// change.
/// </para>
/// </summary>
internal sealed class ApiKeyGate
{
    public const string AdminPath = "/admin";
    public const string LoginPath = "/admin/login";
    public const string CookieName = "indexing-admin";
    private const string HeaderName = "X-Api-Key";
    private const string BearerPrefix = "Bearer ";
    private const string FormField = "key";
    private const string MetricsPath = "/metrics";
    private static readonly object _trustedKey = new();

    private readonly byte[]? _key;
    private readonly byte[]? _readKey;

    /// <summary>A gate for <paramref name="key"/> (null: every request is trusted) and the read-only <paramref name="readKey"/> (only with a key).</summary>
    public ApiKeyGate(string? key, string? readKey = null)
    {
        if (key is null && readKey is not null)
        {
            throw new ArgumentException("a read-only key restricts nothing without the full key; ServerOptions refuses this configuration.", nameof(readKey));
        }

        _key = key is null ? null : Encoding.UTF8.GetBytes(key);
        _readKey = readKey is null ? null : Encoding.UTF8.GetBytes(readKey);
    }

    /// <summary>
    /// Whether the request may see failure texts (index errors, rebuild errors and notes): it proved the
    /// full key (or signed in with it), or the server has none. The read-only key does not. Set by
    /// <see cref="InvokeAsync"/>, which runs before every endpoint.
    /// </summary>
    public static bool CanSeeDetails(HttpContext context) => context.Items.ContainsKey(_trustedKey);

    public async Task InvokeAsync(HttpContext context, RequestDelegate next)
    {
        var request = context.Request;
        var presented = Presented(request);
        if (_key is null || Matches(presented, _key) || IsSignedInAdminRead(context))
        {
            context.Items[_trustedKey] = true;
            await next(context).ConfigureAwait(false);
            return;
        }

        if (HttpMethods.IsPost(request.Method) && request.Path.Equals(LoginPath, StringComparison.Ordinal))
        {
            await next(context).ConfigureAwait(false);
            return;
        }

        var what = $"{request.Method} {request.Path}";
        if (Matches(presented, _readKey))
        {
            if (IsRead(request))
            {
                await next(context).ConfigureAwait(false);
                return;
            }

            await ProblemResults.Forbidden(
                    "Read-only API key",
                    $"{what} was sent with the read-only key ({ServerOptions.ReadApiKeySetting}), which opens only reads: GET and HEAD of documents, queries and " +
                    $"index and rebuild status. Writes, /admin and /metrics need the full key ({ServerOptions.ApiKeySetting}).")
                .ExecuteAsync(context).ConfigureAwait(false);
            return;
        }

        if (HttpMethods.IsGet(request.Method) && request.Path.Equals(AdminPath, StringComparison.Ordinal) && presented is null)
        {
            await AdminPage.Login(StatusCodes.Status401Unauthorized, message: null).ExecuteAsync(context).ConfigureAwait(false);
            return;
        }

        var keys = _readKey is null ? ServerOptions.ApiKeySetting : $"{ServerOptions.ApiKeySetting}, or for reads {ServerOptions.ReadApiKeySetting}";
        context.Response.Headers.WWWAuthenticate = "Bearer";
        await ProblemResults.Unauthorized(
                presented is not null
                    ? $"the API key sent with {what} is not a configured one ({keys}); send the server's key."
                    : $"{what} needs an API key ({keys}): send it as the X-Api-Key header or as Authorization: Bearer <key> (in a browser, open /admin and enter it).")
            .ExecuteAsync(context).ConfigureAwait(false);
    }

    /// <summary><c>POST /admin/login</c> (the page's form): a valid key signs the browser in and goes to the page; another is refused with the form again.</summary>
    public async Task<IResult> LoginAsync(HttpContext context)
    {
        var form = await context.Request.ReadFormAsync(context.RequestAborted).ConfigureAwait(false);
        var entered = form[FormField].Count == 1 ? form[FormField][0] : null;
        if (!Matches(entered, _key))
        {
            return AdminPage.Login(
                StatusCodes.Status401Unauthorized,
                Matches(entered, _readKey)
                    ? $"That is the read-only key ({ServerOptions.ReadApiKeySetting}); the admin page needs the full key ({ServerOptions.ApiKeySetting})."
                    : $"That is not the server's key ({ServerOptions.ApiKeySetting}).");
        }

        var operatorIdentity = new ClaimsIdentity([new Claim(ClaimTypes.Name, "operator")], authenticationType: "api-key");
        await context.SignInAsync(CookieAuthenticationDefaults.AuthenticationScheme, new ClaimsPrincipal(operatorIdentity)).ConfigureAwait(false);
        return TypedResults.LocalRedirect(AdminPath);
    }

    // What the read-only key opens: reads outside the admin surface (documents, queries, index and
    // rebuild status). Verify is a POST: it scans the whole index and store, an operator's action.
    private static bool IsRead(HttpRequest request) =>
        (HttpMethods.IsGet(request.Method) || HttpMethods.IsHead(request.Method) || HttpMethods.IsOptions(request.Method))
        && !request.Path.StartsWithSegments(AdminPath, StringComparison.OrdinalIgnoreCase)
        && !request.Path.StartsWithSegments(MetricsPath, StringComparison.OrdinalIgnoreCase);

    private static bool IsSignedInAdminRead(HttpContext context) =>
        (HttpMethods.IsGet(context.Request.Method) || HttpMethods.IsHead(context.Request.Method))
        && context.Request.Path.StartsWithSegments(AdminPath, StringComparison.Ordinal)
        && context.User.Identity?.IsAuthenticated == true;

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

    private static bool Matches(string? presented, byte[]? key) =>
        key is not null && presented is not null && CryptographicOperations.FixedTimeEquals(Encoding.UTF8.GetBytes(presented), key);
}
