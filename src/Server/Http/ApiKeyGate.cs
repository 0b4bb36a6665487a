using System.Security.Claims;
using System.Security.Cryptography;
using System.Text;
using Indexing.Server.Admin;
using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.Authentication.Cookies;
using Microsoft.AspNetCore.Http;

namespace Indexing.Server.Http;

/// <summary>
/// When an API key is configured, every write (any method but GET/HEAD/OPTIONS) and every /admin and
/// /metrics request must carry it, as <c>X-Api-Key</c> or <c>Authorization: Bearer</c>. Document and
/// index reads stay open, but only requests that proved the key see failure texts
/// (<see cref="CanSeeDetails"/>). The comparison is constant-time so response timing does not reveal
/// how much of a guess matched. Without a key (a loopback server) every request passes and is trusted.
/// <para>
/// The key never travels in a URL. A browser cannot put a header on the admin page's own requests
/// (EventSource has none), so the page asks for the key in a form (<c>POST /admin/login</c>); a valid key
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
    private static readonly object _trustedKey = new();

    private readonly byte[]? _key;

    public ApiKeyGate(string? key)
    {
        _key = key is null ? null : Encoding.UTF8.GetBytes(key);
    }

    /// <summary>
    /// Whether the request may see failure texts (index errors, rebuild errors): it proved the key, or the
    /// server has none. Set by <see cref="InvokeAsync"/>, which runs before every endpoint.
    /// </summary>
    public static bool CanSeeDetails(HttpContext context) => context.Items.ContainsKey(_trustedKey);

    public async Task InvokeAsync(HttpContext context, RequestDelegate next)
    {
        var request = context.Request;
        if (_key is null || Matches(Presented(request)) || IsSignedInAdminRead(context))
        {
            context.Items[_trustedKey] = true;
            await next(context).ConfigureAwait(false);
            return;
        }

        if (!NeedsKey(request) || (HttpMethods.IsPost(request.Method) && request.Path.Equals(LoginPath, StringComparison.Ordinal)))
        {
            await next(context).ConfigureAwait(false);
            return;
        }

        if (HttpMethods.IsGet(request.Method) && request.Path.Equals(AdminPath, StringComparison.Ordinal) && Presented(request) is null)
        {
            await AdminPage.Login(StatusCodes.Status401Unauthorized, message: null).ExecuteAsync(context).ConfigureAwait(false);
            return;
        }

        var presented = Presented(request) is not null;
        context.Response.Headers.WWWAuthenticate = "Bearer";
        await ProblemResults.Unauthorized(
                presented
                    ? $"the API key sent with {request.Method} {request.Path} is not the configured one (Server:ApiKey); send the server's key."
                    : $"{request.Method} {request.Path} needs the API key (Server:ApiKey): send it as the X-Api-Key header or as Authorization: Bearer <key> (in a browser, open /admin and enter it).")
            .ExecuteAsync(context).ConfigureAwait(false);
    }

    /// <summary><c>POST /admin/login</c> (the page's form): a valid key signs the browser in and goes to the page; another is refused with the form again.</summary>
    public async Task<IResult> LoginAsync(HttpContext context)
    {
        var form = await context.Request.ReadFormAsync(context.RequestAborted).ConfigureAwait(false);
        if (!Matches(form[FormField].Count == 1 ? form[FormField][0] : null))
        {
            return AdminPage.Login(StatusCodes.Status401Unauthorized, "That is not the server's key (Server:ApiKey).");
        }

        var operatorIdentity = new ClaimsIdentity([new Claim(ClaimTypes.Name, "operator")], authenticationType: "api-key");
        await context.SignInAsync(CookieAuthenticationDefaults.AuthenticationScheme, new ClaimsPrincipal(operatorIdentity)).ConfigureAwait(false);
        return TypedResults.LocalRedirect(AdminPath);
    }

    private static bool NeedsKey(HttpRequest request) =>
        !(HttpMethods.IsGet(request.Method) || HttpMethods.IsHead(request.Method) || HttpMethods.IsOptions(request.Method))
        || request.Path.StartsWithSegments(AdminPath, StringComparison.OrdinalIgnoreCase)
        || request.Path.StartsWithSegments("/metrics", StringComparison.OrdinalIgnoreCase);

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

    private bool Matches(string? presented) =>
        _key is not null && presented is not null && CryptographicOperations.FixedTimeEquals(Encoding.UTF8.GetBytes(presented), _key);
}
