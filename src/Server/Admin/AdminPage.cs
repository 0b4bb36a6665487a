using System.Reflection;
using Indexing.Storage;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.StaticFiles;

namespace Indexing.Server.Admin;

/// <summary>
/// Serves the admin page's files from the assembly's embedded resources (logical names
/// <c>admin/&lt;file&gt;</c>, set in Indexing.Server.csproj): the page and its script, and uPlot,
/// which the build copies in from npm. Embedding keeps the executable self-contained: no web root
/// to find relative to the working directory, nothing fetched from a CDN.
/// </summary>
internal static class AdminPage
{
    private const string ResourcePrefix = "admin/";
    private static readonly Assembly _assembly = typeof(AdminPage).Assembly;
    private static readonly FileExtensionContentTypeProvider _contentTypes = new();

    /// <summary>
    /// The sign-in form of a server with an API key (<c>login.html</c>), with <paramref name="status"/>
    /// and, when given, a line saying what went wrong (plain text, HTML-encoded here).
    /// </summary>
    public static IResult Login(int status, string? message)
    {
        using var stream = _assembly.GetManifestResourceStream(ResourcePrefix + "login.html")
            ?? throw new InvalidOperationException("the admin page's login.html is not embedded; rebuild the server.");
        using var reader = new StreamReader(stream);
        var html = reader.ReadToEnd().Replace("<!--message-->", message is null ? string.Empty : System.Net.WebUtility.HtmlEncode(message), StringComparison.Ordinal);
        return TypedResults.Content(html, "text/html; charset=utf-8", statusCode: status);
    }

    public static IResult Serve(string file)
    {
        var stream = _assembly.GetManifestResourceStream(ResourcePrefix + file);
        if (stream is null)
        {
            return TypedResults.Problem(
                detail: $"the admin page has no file {MessageText.Quote(file)}.",
                statusCode: StatusCodes.Status404NotFound,
                title: "Unknown admin file");
        }

        var type = _contentTypes.TryGetContentType(file, out var known) ? known : "application/octet-stream";
        return TypedResults.Stream(stream, type.StartsWith("text/", StringComparison.Ordinal) || type.EndsWith("javascript", StringComparison.Ordinal)
            ? type + "; charset=utf-8"
            : type);
    }
}
