using System.Buffers;
using System.Globalization;
using System.IO.Pipelines;
using Indexing.Engine;
using Indexing.Server.Hosting;
using Indexing.Server.Loading;
using Indexing.Storage;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.HttpResults;
using Microsoft.AspNetCore.Routing;

namespace Indexing.Server.Http;

/// <summary>
/// <c>PUT/GET/DELETE /docs/{id}</c>. Ids may contain '/', so the route is a catch-all. Every rule
/// is checked (id, size, UTF-8, strict JSON object) before the engine writes, so a refused
/// request writes nothing; the engine checks the same rules again, which is cheap next to the write.
/// A write refused because the store's volume is full answers 507 with the store's message (reads go on).
/// </summary>
internal static class DocumentEndpoints
{
    // Kestrel's cap on a PUT's body: the document limit plus room, so that PUT itself finds a body over
    // the limit and says so with the document rule's message rather than Kestrel's bare 413.
    private const long BodySlackBytes = 64 << 10;

    /// <summary>Maps the document endpoints; a bulk load writes through <paramref name="bulkTarget"/> when given (a cluster shard's, which checks ownership), else the engine.</summary>
    public static void Map(IEndpointRouteBuilder app, IndexingEngine engine, FailureTexts failures, Func<IBulkTarget>? bulkTarget = null)
    {
        // Bulk is mapped first and is POST-only, so "bulk" stays usable as a document id for GET/PUT/DELETE.
        // Its body has no size limit as a whole (a load can be gigabytes); each line has one (BulkLoad).
        app.MapPost("/docs/bulk", (HttpContext context, CancellationToken cancellationToken) =>
                BulkAsync(context, bulkTarget?.Invoke() ?? new EngineTarget(engine), failures, cancellationToken))
            .Require(ContentTypes.NdJson)
            .WithMetadata(new BodySizeLimit(null));
        app.MapPut("/docs/{**id}", (string? id, HttpContext context, CancellationToken cancellationToken) =>
                PutAsync(id ?? string.Empty, context, engine, failures, cancellationToken))
            .Require(ContentTypes.Json)
            .WithMetadata(new BodySizeLimit(engine.Options.Storage.MaxDocumentBytes + BodySlackBytes));
        app.MapGet("/docs/{**id}", (string? id, HttpContext context) => Get(id ?? string.Empty, context, engine));
        app.MapDelete("/docs/{**id}", (string? id, HttpContext context) => Delete(id ?? string.Empty, context, engine, failures))
            .RequireNoBody();
    }

    /// <summary>The ETag header value for a store etag (a strong validator: the body is stored byte for byte).</summary>
    public static string ETag(long etag) => string.Create(CultureInfo.InvariantCulture, $"\"{etag}\"");

    // NDJSON, streamed line by line (see BulkLoad): 200 with what was stored and which lines were refused.
    // A full volume stops the load at the chunk it refused: the chunks before it are stored, as the detail says.
    private static async Task<IResult> BulkAsync(HttpContext context, IBulkTarget target, FailureTexts failures, CancellationToken cancellationToken)
    {
        try
        {
            var result = await BulkLoad.LoadAsync(context.Request.BodyReader, target, ServerOptions.MaxDocumentBytesSetting, progress: null, cancellationToken)
                .ConfigureAwait(false);
            return TypedResults.Ok(result);
        }
        catch (DocumentStoreException e) when (e.Kind == IndexingErrorKind.StoreFull)
        {
            return ProblemResults.StoreFull(e, failures);
        }
        catch (BulkTargetRefusedException e)
        {
            return TypedResults.Problem(statusCode: e.Status, title: e.Title, detail: e.Message);
        }
    }

    private static async Task<IResult> PutAsync(string id, HttpContext context, IndexingEngine engine, FailureTexts failures, CancellationToken cancellationToken)
    {
        if (!IndexingEngine.IsValidDocumentId(id, out var idError))
        {
            return ProblemResults.Invalid(idError);
        }

        var limit = engine.Options.Storage.MaxDocumentBytes;
        var declared = context.Request.ContentLength;
        if (declared > limit)
        {
            // Refuse before reading: the client may be about to send gigabytes.
            return ProblemResults.TooLarge(TooLargeMessage(id, $"{ByteSize.FormatExact(declared.Value)} (its Content-Length)", limit));
        }

        // Read at most one byte past the limit: enough to know it is too large without buffering more.
        var reader = context.Request.BodyReader;
        ReadResult read;
        try
        {
            read = await reader.ReadAtLeastAsync((int)limit + 1, cancellationToken).ConfigureAwait(false);
        }
        catch (BadHttpRequestException e) when (e.StatusCode == StatusCodes.Status413PayloadTooLarge)
        {
            // Kestrel's own cap (the limit plus slack) tripped first on a body without Content-Length.
            return ProblemResults.TooLarge(TooLargeMessage(id, $"more than {ByteSize.FormatExact(limit)}", limit));
        }

        try
        {
            if (read.Buffer.Length > limit)
            {
                return ProblemResults.TooLarge(TooLargeMessage(id, $"more than {ByteSize.FormatExact(limit)}", limit));
            }

            var body = read.Buffer.ToArray();
            if (!engine.IsValidDocument(id, body, out var bodyError))
            {
                return ProblemResults.Invalid(bodyError);
            }

            // Only for the status code (201 vs 200): a concurrent writer of the same id can make it
            // stale, which costs the client nothing, since the etag in the answer is exact either way.
            var existed = engine.GetEtag(id) is not null;
            long etag;
            try
            {
                etag = engine.Put(id, body);
            }
            catch (DocumentStoreException e) when (e.Kind == IndexingErrorKind.StoreFull)
            {
                return ProblemResults.StoreFull(e, failures);
            }

            context.Response.Headers.ETag = ETag(etag);
            var written = new DocumentWritten(id, etag);
            return existed ? TypedResults.Ok(written) : TypedResults.Created(DocumentPath(id), written);
        }
        finally
        {
            reader.AdvanceTo(read.Buffer.End);
        }
    }

    private static IResult Get(string id, HttpContext context, IndexingEngine engine)
    {
        if (!IndexingEngine.IsValidDocumentId(id, out var idError))
        {
            return ProblemResults.Invalid(idError);
        }

        if (engine.Get(id) is not { } document)
        {
            return NotFound(id);
        }

        context.Response.Headers.ETag = ETag(document.Etag);
        return new DocumentBodyResult(document.Body);
    }

    private static IResult Delete(string id, HttpContext context, IndexingEngine engine, FailureTexts failures)
    {
        if (!IndexingEngine.IsValidDocumentId(id, out var idError))
        {
            return ProblemResults.Invalid(idError);
        }

        long? deleted;
        try
        {
            deleted = engine.Delete(id);
        }
        catch (DocumentStoreException e) when (e.Kind == IndexingErrorKind.StoreFull)
        {
            return ProblemResults.StoreFull(e, failures);
        }

        if (deleted is not { } etag)
        {
            return NotFound(id);
        }

        context.Response.Headers.ETag = ETag(etag);
        return TypedResults.Ok(new DocumentWritten(id, etag));
    }

    private static ProblemHttpResult NotFound(string id) =>
        ProblemResults.NotFound("Unknown document", $"document {MessageText.Quote(id)} does not exist (never written, or deleted).");

    public static string TooLargeMessage(string id, string size, long limit) =>
        $"document {MessageText.Quote(id)} is {size}; the limit is {ByteSize.FormatExact(limit)} ({ServerOptions.MaxDocumentBytesSetting}). " +
        $"Split the document, move large binary data out of it, or raise {ServerOptions.MaxDocumentBytesSetting}.";

    /// <summary>A document's path, <c>/docs/{id}</c>, with the id escaped except its '/' (the route is a catch-all); a cluster forwards to <c>/shard</c> + this.</summary>
    public static string DocumentPath(string id) => "/docs/" + Uri.EscapeDataString(id).Replace("%2F", "/", StringComparison.Ordinal);
}

/// <summary>What a write returns: the document's id and its new etag.</summary>
internal sealed record DocumentWritten(string Id, long Etag);
