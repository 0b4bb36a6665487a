using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.Net.Http.Headers;

namespace Indexing.Server.Http;

/// <summary>
/// The content types a state-changing endpoint accepts, as an endpoint filter: anything else, or none
/// on an endpoint that takes a body, is a 415 naming what to send. Together with
/// <see cref="CrossSiteWriteGuard"/> this keeps HTML forms out (they can only send
/// <c>application/x-www-form-urlencoded</c>, <c>multipart/form-data</c> or <c>text/plain</c>).
/// <para>
/// Routing's own <c>Accepts</c> metadata is not used: its matcher lets a request with no
/// Content-Type through to the endpoint, and answers a mismatch with an empty 415.
/// </para>
/// </summary>
internal static class ContentTypes
{
    public const string Json = "application/json";
    public const string NdJson = "application/x-ndjson";
    public const string Form = "application/x-www-form-urlencoded";

    /// <summary>The body must be one of <paramref name="types"/> (UTF-8 when a charset is given).</summary>
    public static TBuilder Require<TBuilder>(this TBuilder builder, params string[] types)
        where TBuilder : IEndpointConventionBuilder =>
        builder.AddEndpointFilter((context, next) =>
            Problem(context.HttpContext.Request, types, bodyless: false) is { } problem ? ValueTask.FromResult<object?>(problem) : next(context));

    /// <summary>An endpoint that reads no body: no Content-Type, or JSON (an empty object from clients that always send one).</summary>
    public static TBuilder RequireNoBody<TBuilder>(this TBuilder builder)
        where TBuilder : IEndpointConventionBuilder =>
        builder.AddEndpointFilter((context, next) =>
            Problem(context.HttpContext.Request, [Json], bodyless: true) is { } problem ? ValueTask.FromResult<object?>(problem) : next(context));

    private static IResult? Problem(HttpRequest request, string[] types, bool bodyless)
    {
        var what = $"{request.Method} {request.Path}";
        var expected = string.Join(" or ", types);
        var contentType = request.ContentType;
        if (string.IsNullOrWhiteSpace(contentType))
        {
            return bodyless
                ? null
                : ProblemResults.UnsupportedMediaType($"{what} has no Content-Type; send the body as {expected} (curl: -H 'Content-Type: {types[0]}').");
        }

        if (!MediaTypeHeaderValue.TryParse(contentType, out var parsed) || !types.Any(t => parsed.MediaType.Equals(t, StringComparison.OrdinalIgnoreCase)))
        {
            return ProblemResults.UnsupportedMediaType(
                (bodyless ? $"{what} takes no body, but one was sent as {contentType}; send none." : $"{what} takes {expected}, not {contentType}.") +
                " Forms and text/plain posts are refused so that web pages cannot change this server.");
        }

        if (parsed.Charset.HasValue && !parsed.Charset.Equals("utf-8", StringComparison.OrdinalIgnoreCase))
        {
            return ProblemResults.UnsupportedMediaType($"{what} takes UTF-8 {expected}, not charset {parsed.Charset}.");
        }

        return null;
    }
}
