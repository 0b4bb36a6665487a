using System.Text.Json.Serialization;
using System.Text.Json.Serialization.Metadata;
using Indexing.Server.Http;
using Indexing.Storage;
using Microsoft.AspNetCore.Authentication.Cookies;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.DataProtection;
using Microsoft.AspNetCore.Diagnostics;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.HostFiltering;
using Microsoft.AspNetCore.Http;
using MinDataRate = Microsoft.AspNetCore.Server.Kestrel.Core.MinDataRate;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;

namespace Indexing.Server.Hosting;

// What stands between a client and the endpoints, in request order:
//   host filtering (ASP.NET Core's, from AllowedHosts: a loopback server answers only to loopback
//   names, so DNS rebinding cannot reach it) -> exception handler (problem details without exception
//   text) -> cookie authentication and ApiKeyGate (when a key is set: every request needs the full
//   or the read-only key) -> CrossSiteWriteGuard (no writes from other origins) -> rate limiting
//   (queries, event streams) -> the endpoint, with its content-type filter and its body limit.
// Kestrel: at most Server:MaxConnections connections, small bodies by default (endpoints that take
// larger ones say so), and its minimum request and response data rates left on, so a client that
// trickles a body or stops reading is cut off instead of holding a connection and a request.
internal sealed partial class ServerHost
{
    /// <summary>The body limit of every endpoint that does not set its own: small JSON (limits, forms, bodyless POSTs).</summary>
    public const long SmallBodyBytes = 64 << 10;

    // Lowest-priority configuration (appsettings, environment and arguments override it): ASP.NET
    // Core's per-request Information logs would bury the demo's console, so requests log warnings
    // and errors only unless Logging:LogLevel:Microsoft.AspNetCore says otherwise.
    private static readonly Dictionary<string, string?> QuietDefaults = new()
    {
        ["Logging:LogLevel:Microsoft.AspNetCore"] = "Warning",
    };

    private static void ConfigureServices(WebApplicationBuilder builder, ServerOptions options)
    {
        builder.WebHost.ConfigureKestrel(kestrel =>
        {
            kestrel.Listen(options.Address, options.Port);
            kestrel.Limits.MaxConcurrentConnections = options.Limits.MaxConnections;
            kestrel.Limits.MaxRequestBodySize = SmallBodyBytes;
            kestrel.Limits.MinResponseDataRate = new MinDataRate(options.Limits.MinResponseBytesPerSecond, HttpLimits.ResponseGracePeriod);
            kestrel.AddServerHeader = false;
        });
        // The host filtering middleware is already in the pipeline (the web host adds it first); it
        // reads AllowedHosts itself only when nothing configured these options.
        builder.Services.Configure<HostFilteringOptions>(hosts => hosts.AllowedHosts = [.. options.AllowedHosts]);
        // The command that runs the host owns Ctrl+C and SIGTERM (System.CommandLine cancels its token;
        // disposing the host is the graceful stop). The default console lifetime would catch them too
        // and stop the web host on its own, under a command that went on as if nothing happened.
        builder.Services.AddSingleton<IHostLifetime, CommandOwnedLifetime>();
        // Fixed, not from configuration: the command's own stop limit is derived from it.
        builder.Services.Configure<HostOptions>(host => host.ShutdownTimeout = ShutdownTimeout);
        builder.Services.AddProblemDetails();
        builder.Services.ConfigureHttpJsonOptions(json =>
        {
            json.SerializerOptions.Converters.Add(new JsonStringEnumConverter(json.SerializerOptions.PropertyNamingPolicy));
            json.SerializerOptions.TypeInfoResolver = (json.SerializerOptions.TypeInfoResolver ?? new DefaultJsonTypeInfoResolver())
                .WithAddedModifier(FailureTexts.HideDirectories);
        });
        RequestLimits.Add(builder.Services, options.Limits);
        if (options.ApiKey is not null)
        {
            // Sign-in tickets are encrypted with keys kept in memory: nothing to store or protect on
            // disk, and a restart signs every browser out (the operator enters the key again).
            builder.Services.AddDataProtection().UseEphemeralDataProtectionProvider();
            builder.Services.AddAuthentication(CookieAuthenticationDefaults.AuthenticationScheme).AddCookie(cookie =>
            {
                cookie.Cookie.Name = ApiKeyGate.CookieName;
                cookie.Cookie.Path = ApiKeyGate.AdminPath;
                cookie.Cookie.HttpOnly = true;
                cookie.Cookie.SameSite = SameSiteMode.Strict;
                cookie.Cookie.SecurePolicy = CookieSecurePolicy.SameAsRequest;
                cookie.ExpireTimeSpan = TimeSpan.FromHours(12);
                cookie.SlidingExpiration = true;
            });
        }
    }

    // Returns the gate, which also answers POST /admin/login when a key is set.
    private static ApiKeyGate ConfigurePipeline(WebApplication app, ServerOptions options)
    {
        app.UseExceptionHandler(new ExceptionHandlerOptions
        {
            // A body that broke Kestrel's limits (too large, too slow) is the client's doing: its own status, not 500.
            // A full store volume is 507 wherever a write meets it (the document endpoints say more).
            StatusCodeSelector = exception => exception switch
            {
                BadHttpRequestException bad => bad.StatusCode,
                IndexingException { Kind: IndexingErrorKind.StoreFull } => StatusCodes.Status507InsufficientStorage,
                _ => StatusCodes.Status500InternalServerError,
            },
        });
        app.UseStatusCodePages();
        var gate = new ApiKeyGate(options.ApiKey, options.ReadApiKey);
        if (options.ApiKey is not null)
        {
            app.UseAuthentication();
        }

        app.Use(gate.InvokeAsync);
        app.Use(CrossSiteWriteGuard.InvokeAsync);
        app.UseRateLimiter();
        return gate;
    }
}
