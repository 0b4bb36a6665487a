using System.Text.Json;
using Indexing.Engine;
using Indexing.Indexer;
using Microsoft.AspNetCore.Http;

namespace Indexing.Server.Http;

/// <summary>
/// The answer to a query: <c>{"totalHits": n, "hits": [{"id", "score", "etag", "sort", "document"}]}</c>,
/// <c>"sort"</c> only when the query had sort keys: the hit's value of each key, in the keys' order
/// (<see cref="QueryHit.SortValues"/>: a keyword as a string, null where the document has none; a
/// number as a number), which a cluster's merge of several nodes' pages compares by.
/// With <c>include=docs</c> it is written as it is read: each hit's document is read from the store
/// alone and written in <see cref="BodyPieces"/> (each piece flushed) before the next is read, so the
/// server holds one document and one piece in Kestrel's buffer, not a batch or the page (up to 10,000
/// documents of up to the document limit each). The flushes wait while the client is slower than the
/// store: a client that stops reading stops the reads too, and Kestrel's minimum response data rate
/// (<c>Server:MinResponseBytesPerSecond</c>) ends one that stalls.
/// <para>
/// A document is null when not asked for, when it was deleted after the index saw it, or deleted
/// while the answer was being written. Once the first bytes are sent the status is 200; a store
/// failure after that can only end the response early (the client sees truncated JSON), and is logged
/// by the exception handler.
/// </para>
/// </summary>
internal sealed class QueryHitsResult : IResult
{
    // Without documents, hits are flushed this many at a time.
    private const int FlushEveryHits = 32;

    // Validation off: a body is written straight to the pipe between the "document" property name and
    // the end of its object, which a validating writer would refuse. The structure is this class's own.
    private static readonly JsonWriterOptions _writerOptions = new() { SkipValidation = true };

    private readonly QueryResult _result;
    private readonly IndexingEngine? _engine;
    private readonly bool _sorted;

    /// <summary>
    /// The hits of <paramref name="result"/>, with their documents from <paramref name="engine"/> when
    /// one is given, and their sort values when the query was <paramref name="sorted"/> by fields.
    /// </summary>
    public QueryHitsResult(QueryResult result, IndexingEngine? engine, bool sorted)
    {
        _result = result;
        _engine = engine;
        _sorted = sorted;
    }

    public async Task ExecuteAsync(HttpContext httpContext)
    {
        var response = httpContext.Response;
        var cancellationToken = httpContext.RequestAborted;
        response.StatusCode = StatusCodes.Status200OK;
        response.ContentType = "application/json; charset=utf-8";
        var body = response.BodyWriter;
        await using var json = new Utf8JsonWriter(body, _writerOptions);
        json.WriteStartObject();
        json.WriteNumber("totalHits", _result.TotalHits);
        json.WriteStartArray("hits");
        var one = new string[1];
        for (var i = 0; i < _result.Hits.Count; i++)
        {
            var hit = _result.Hits[i];
            json.WriteStartObject();
            json.WriteString("id", hit.Id);
            json.WriteNumber("score", hit.Score);
            json.WriteNumber("etag", hit.Etag);
            if (_sorted)
            {
                WriteSortValues(json, hit.SortValues);
            }

            json.WritePropertyName("document");
            one[0] = hit.Id;
            // GetMany, not Get: serving a query is not the live traffic a rebuild's prefetcher backs off on.
            if (_engine?.GetMany(one)[0] is { } document)
            {
                // Validated as strict JSON when it was stored; written after what the writer holds.
                await json.FlushAsync(cancellationToken).ConfigureAwait(false);
                await BodyPieces.WriteAsync(body, document.Body, cancellationToken).ConfigureAwait(false);
            }
            else
            {
                json.WriteNullValue();
            }

            json.WriteEndObject();
            if (_engine is not null || i % FlushEveryHits == FlushEveryHits - 1)
            {
                await json.FlushAsync(cancellationToken).ConfigureAwait(false);
                await body.FlushAsync(cancellationToken).ConfigureAwait(false);
            }
        }

        json.WriteEndArray();
        json.WriteEndObject();
        await json.FlushAsync(cancellationToken).ConfigureAwait(false);
    }

    // The engine gives strings, nulls, longs and finite doubles (QueryHit.SortValues).
    private static void WriteSortValues(Utf8JsonWriter json, IReadOnlyList<object?> values)
    {
        json.WriteStartArray("sort");
        foreach (var value in values)
        {
            switch (value)
            {
                case null:
                    json.WriteNullValue();
                    break;
                case string text:
                    json.WriteStringValue(text);
                    break;
                case long number:
                    json.WriteNumberValue(number);
                    break;
                case double number:
                    json.WriteNumberValue(number);
                    break;
                default:
                    throw new InvalidOperationException($"a sort value of type {value.GetType().Name}; the engine gives strings, longs and doubles.");
            }
        }

        json.WriteEndArray();
    }
}
