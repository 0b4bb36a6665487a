using System.Text.Json;
using Indexing.Indexer;
using Indexing.Storage;
using Microsoft.AspNetCore.Http;

namespace Indexing.Server.Http;

/// <summary>
/// The answer to a query: <c>{"totalHits": n, "hits": [{"id", "score", "etag", "document"}]}</c>.
/// With <c>include=docs</c> it is written as it is read: the hits' documents are
/// read from the store <see cref="BatchDocuments"/> at a time (one sorted MultiGet each) and each
/// batch is written and flushed before the next is read, so the server holds one batch, not the
/// page (up to 10,000 documents of up to the document limit each). The flush waits while the client
/// is slower than the store: a client that stops reading stops the reads too, and Kestrel's minimum
/// response data rate ends one that stalls.
/// <para>
/// A document is null when not asked for, when it was deleted after the index saw it, or deleted
/// while the answer was being written. Once the first bytes are sent the status is 200; a store
/// failure after that can only end the response early (the client sees truncated JSON), and is logged
/// by the exception handler.
/// </para>
/// </summary>
internal sealed class QueryHitsResult : IResult
{
    public const int BatchDocuments = 32;

    private readonly QueryResult _result;
    private readonly DocumentStore? _store;

    /// <summary>The hits of <paramref name="result"/>, with their documents from <paramref name="store"/> when one is given.</summary>
    public QueryHitsResult(QueryResult result, DocumentStore? store)
    {
        _result = result;
        _store = store;
    }

    public async Task ExecuteAsync(HttpContext httpContext)
    {
        var response = httpContext.Response;
        var cancellationToken = httpContext.RequestAborted;
        response.StatusCode = StatusCodes.Status200OK;
        response.ContentType = "application/json; charset=utf-8";
        var body = response.BodyWriter;
        await using var json = new Utf8JsonWriter(body);
        json.WriteStartObject();
        json.WriteNumber("totalHits", _result.TotalHits);
        json.WriteStartArray("hits");
        var ids = new string[Math.Min(BatchDocuments, _result.Hits.Count)];
        for (var start = 0; start < _result.Hits.Count; start += BatchDocuments)
        {
            var count = Math.Min(BatchDocuments, _result.Hits.Count - start);
            for (var i = 0; i < count; i++)
            {
                ids[i] = _result.Hits[start + i].Id;
            }

            var documents = _store?.GetMany(count == ids.Length ? ids : ids[..count]);
            for (var i = 0; i < count; i++)
            {
                var hit = _result.Hits[start + i];
                json.WriteStartObject();
                json.WriteString("id", hit.Id);
                json.WriteNumber("score", hit.Score);
                json.WriteNumber("etag", hit.Etag);
                json.WritePropertyName("document");
                if (documents?[i] is { } document)
                {
                    // Validated as strict JSON when it was stored.
                    json.WriteRawValue(document.Body, skipInputValidation: true);
                }
                else
                {
                    json.WriteNullValue();
                }

                json.WriteEndObject();
            }

            await json.FlushAsync(cancellationToken).ConfigureAwait(false);
            await body.FlushAsync(cancellationToken).ConfigureAwait(false);
        }

        json.WriteEndArray();
        json.WriteEndObject();
        await json.FlushAsync(cancellationToken).ConfigureAwait(false);
    }
}
