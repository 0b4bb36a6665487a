using System.Net;
using System.Text.Json;
using Indexing.Cluster;
using Indexing.Indexer;
using Indexing.Server.Http;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Primitives;

namespace Indexing.Server.Cluster;

/// <summary>
/// <c>GET /indexes/{name}/query</c> in a cluster: the single node's parameters (q, take, skip, sort,
/// include) and <c>partial=true</c>. Shards return ids, scores and sort values only; with
/// <c>include=docs</c> the page's documents are read from their owners one at a time as the answer is
/// written (<see cref="ClusterHitsWithDocuments"/>), so a node holds one document, not pages of them. The query is scattered to every shard's local index of the
/// cluster's active generation, named in each call, so an answer never mixes generations, and each
/// shard's first skip+take hits are merged (<see cref="ShardMerge"/>: exactly by sort keys; by each
/// shard's own score for relevance). A shard that no longer holds that generation (the cluster switched
/// and its grace ran out) makes the whole query start again on the new one.
/// <para>
/// A shard whose node is down: 503 naming it, or with <c>partial=true</c> the other shards' hits,
/// flagged <c>"partial": true</c> with the missing nodes listed.
/// </para>
/// </summary>
internal static class ClusterQuery
{
    private const int Attempts = 4;

    public static async Task<IResult> RunAsync(string name, HttpContext context, ClusterNode node, ShardClient shards, CancellationToken cancellationToken)
    {
        var parameters = context.Request.Query;
        var partial = false;
        if (parameters.TryGetValue("partial", out var partialText))
        {
            if (!bool.TryParse(partialText.ToString(), out partial))
            {
                return ProblemResults.BadRequest("Invalid query", $"partial is {MessageText.Quote(partialText.ToString())}; it is true (answer with the shards that are up, flagged) or false (the default: 503 while a shard is down).");
            }

            parameters = new QueryCollection(parameters.Where(p => p.Key != "partial").ToDictionary(p => p.Key, p => p.Value));
        }

        if (!QueryRequest.TryParse(parameters, out var query, out var includeDocuments, out var problem))
        {
            return ProblemResults.BadRequest("Invalid query", problem);
        }

        IndexQuery shardQuery;
        try
        {
            shardQuery = ShardMerge.ShardQuery(query);
        }
        catch (ArgumentOutOfRangeException e)
        {
            return ProblemResults.BadRequest("Invalid query", $"{e.Message.Split(" (Parameter", 2)[0]} Page deeper with a sort key and a range query on it.");
        }

        for (var attempt = 1; ; attempt++)
        {
            var snapshot = node.Snapshot.Indexes.ContainsKey(name) ? node.Snapshot : await node.RefreshAsync(cancellationToken).ConfigureAwait(false);
            if (!snapshot.Indexes.TryGetValue(name, out var index))
            {
                return ProblemResults.NotFound("Unknown index", $"the cluster has no index {MessageText.Quote(name)}; define it with PUT /indexes/{name}.");
            }

            var generation = index.Index.Active.Generation;
            var answers = await Task.WhenAll(node.Map.Nodes.Select(owner => AskAsync(owner, name, generation, shardQuery, node, shards, cancellationToken))).ConfigureAwait(false);
            if (answers.Any(a => a.Gone))
            {
                // The shard retired this generation: the cluster switched since this node's last read.
                if (attempt < Attempts)
                {
                    await Task.Delay(node.Options.PollInterval, cancellationToken).ConfigureAwait(false);
                    continue;
                }

                var missing = string.Join(", ", answers.Where(a => a.Gone).Select(a => a.Node));
                return ProblemResults.Unavailable(
                    "Generation not held",
                    $"shard {missing} does not hold generation {generation} of index {MessageText.Quote(name)} (asked {Attempts} times): the cluster switched past it, or the shard has not created it yet; try again.");
            }

            if (answers.FirstOrDefault(a => a.Refused is not null) is { Refused: { } refused })
            {
                return refused;
            }

            var down = answers.Where(a => a.Down is not null).ToList();
            if (down.Count > 0 && !partial)
            {
                return ProblemResults.Unavailable(
                    "Shard down",
                    $"{string.Join(" ", down.Select(d => d.Down))} The query needs every shard; ask with partial=true for the other shards' hits, flagged partial.");
            }

            var pages = answers.Where(a => a.Page is not null).Select(a => a.Page!).ToList();
            QueryResult merged;
            try
            {
                merged = ShardMerge.Merge(query, [.. pages.Select(p => p.Result)]);
            }
            catch (ArgumentException e)
            {
                return ProblemResults.Unavailable("Shards disagree", $"the shards' answers could not be merged: {e.Message}");
            }

            // The merge returns the shards' own hit objects: each one's shard by reference.
            var origin = new Dictionary<QueryHit, string>(ReferenceEqualityComparer.Instance);
            foreach (var page in pages)
            {
                foreach (var hit in page.Result.Hits)
                {
                    origin[hit] = page.Node;
                }
            }

            var answer = new ClusterQueryAnswer(
                name,
                generation,
                merged.TotalHits,
                down.Count > 0,
                [.. down.Select(d => d.Node)],
                [.. merged.Hits.Select(h => new ClusterHit(h.Id, h.Score, h.Etag, query.Sort.Count > 0 ? h.SortValues : null, origin[h], null))]);
            return includeDocuments ? new ClusterHitsWithDocuments(answer, node, shards) : TypedResults.Ok(answer);
        }
    }

    // One shard's page, or why there is none: down (its node), gone (no longer holds the generation),
    // or refused (the query itself is wrong: the same on every shard, so its answer is the client's).
    private static async Task<ShardOutcome> AskAsync(
        string owner, string name, int generation, IndexQuery query, ClusterNode node, ShardClient shards, CancellationToken cancellationToken)
    {
        try
        {
            var url = ShardClient.UrlOf(node, owner, $"holds a shard of index {MessageText.Quote(name)}");
            var parameters = new Dictionary<string, StringValues>
            {
                ["q"] = query.Text,
                ["skip"] = query.Skip.ToString(System.Globalization.CultureInfo.InvariantCulture),
                ["take"] = query.Take.ToString(System.Globalization.CultureInfo.InvariantCulture),
            };
            if (query.Sort.Count > 0)
            {
                parameters["sort"] = string.Join(',', query.Sort);
            }

            var path = $"shard/indexes/{ClusterNode.LocalName(name, generation)}/query" + QueryString.Create(parameters);
            using var request = shards.Request(HttpMethod.Get, url, path);
            using var response = await shards.SendAsync(request, owner, HttpCompletionOption.ResponseContentRead, cancellationToken).ConfigureAwait(false);
            var body = await response.Content.ReadAsByteArrayAsync(cancellationToken).ConfigureAwait(false);
            if (response.StatusCode == HttpStatusCode.NotFound)
            {
                return new ShardOutcome(owner, null, null, Gone: true, null);
            }

            if (response.StatusCode == HttpStatusCode.ServiceUnavailable)
            {
                return new ShardOutcome(owner, null, $"node {MessageText.Quote(owner)} could not answer ({Detail(body)}).", false, null);
            }

            if (!response.IsSuccessStatusCode)
            {
                return new ShardOutcome(owner, null, null, false, TypedResults.Problem(
                    statusCode: (int)response.StatusCode, title: "Query refused", detail: $"shard {owner}: {Detail(body)}"));
            }

            return new ShardOutcome(owner, ShardPage.Parse(owner, body), null, false, null);
        }
        catch (NodeDownException e)
        {
            return new ShardOutcome(owner, null, e.Message, false, null);
        }
    }

    private static string Detail(byte[] problem)
    {
        try
        {
            using var json = JsonDocument.Parse(problem);
            return json.RootElement.TryGetProperty("detail", out var detail) ? detail.GetString() ?? string.Empty : json.RootElement.GetRawText();
        }
        catch (JsonException)
        {
            return System.Text.Encoding.UTF8.GetString(problem);
        }
    }

    private sealed record ShardOutcome(string Node, ShardPage? Page, string? Down, bool Gone, IResult? Refused);
}

/// <summary>
/// One shard's answer as its JSON says it (<c>{"totalHits", "hits": [{"id", "score", "etag", "sort", "document"}]}</c>):
/// sort values back to strings, nulls, longs (integral numbers) and doubles, each hit's document kept as JSON.
/// </summary>
internal sealed record ShardPage(string Node, QueryResult Result)
{
    public static ShardPage Parse(string node, byte[] body)
    {
        using var json = JsonDocument.Parse(body);
        var root = json.RootElement;
        var hits = new List<QueryHit>();
        foreach (var hit in root.GetProperty("hits").EnumerateArray())
        {
            IReadOnlyList<object?> sort = hit.TryGetProperty("sort", out var values)
                ? [.. values.EnumerateArray().Select(SortValue)]
                : [];
            hits.Add(new QueryHit(hit.GetProperty("id").GetString()!, hit.GetProperty("score").GetSingle(), hit.GetProperty("etag").GetInt64()) { SortValues = sort });
        }

        return new ShardPage(node, new QueryResult(root.GetProperty("totalHits").GetInt64(), hits));
    }

    private static object? SortValue(JsonElement value) => value.ValueKind switch
    {
        JsonValueKind.Null => null,
        JsonValueKind.String => value.GetString(),
        JsonValueKind.Number when value.TryGetInt64(out var whole) => whole,
        JsonValueKind.Number => value.GetDouble(),
        _ => throw new JsonException($"a sort value is {value.ValueKind}; shards write strings, numbers or null."),
    };
}

/// <summary>A cluster query's answer: the generation every hit came from, and whether shards were missing.</summary>
internal sealed record ClusterQueryAnswer(
    string Index, int Generation, long TotalHits, bool Partial, IReadOnlyList<string> MissingShards, IReadOnlyList<ClusterHit> Hits);

/// <summary>One hit: as on a single node (sort values only when the query sorts), with the shard (node) it came from.</summary>
internal sealed record ClusterHit(
    string Id,
    float Score,
    long Etag,
    [property: System.Text.Json.Serialization.JsonIgnore(Condition = System.Text.Json.Serialization.JsonIgnoreCondition.WhenWritingNull)] IReadOnlyList<object?>? Sort,
    string Shard,
    JsonElement? Document);

/// <summary>
/// A cluster query's answer with each hit's document, written as it is read: the hits as merged, then
/// for each one its document from its owner's <c>/shard/docs/{id}</c>, copied into the answer before the
/// next is asked for. The node holds one document in flight, whatever the page. A document deleted
/// since the query is null, as on a single node. One its owner could not give (down, or failing since
/// the query) is null too, and listed at the end, in <c>"documentsUnread": [{"id", "shard", "reason"}]</c>:
/// the status is sent before the first document is read, so the answer says it instead.
/// </summary>
internal sealed class ClusterHitsWithDocuments(ClusterQueryAnswer answer, ClusterNode node, ShardClient shards) : IResult
{
    private static readonly JsonWriterOptions WriterOptions = new() { SkipValidation = true };

    public async Task ExecuteAsync(HttpContext httpContext)
    {
        var cancellationToken = httpContext.RequestAborted;
        var response = httpContext.Response;
        response.StatusCode = StatusCodes.Status200OK;
        response.ContentType = "application/json; charset=utf-8";
        // The pipe, not the stream: the writer's flushes then fill the pipe's buffer, never a synchronous write.
        var body = response.BodyWriter;
        await using var json = new Utf8JsonWriter(body, WriterOptions);
        var options = new JsonSerializerOptions(JsonSerializerDefaults.Web);
        json.WriteStartObject();
        json.WriteString("index", answer.Index);
        json.WriteNumber("generation", answer.Generation);
        json.WriteNumber("totalHits", answer.TotalHits);
        json.WriteBoolean("partial", answer.Partial);
        json.WritePropertyName("missingShards");
        JsonSerializer.Serialize(json, answer.MissingShards, options);
        json.WriteStartArray("hits");
        var unread = new List<object>();
        foreach (var hit in answer.Hits)
        {
            json.WriteStartObject();
            json.WriteString("id", hit.Id);
            json.WriteNumber("score", hit.Score);
            json.WriteNumber("etag", hit.Etag);
            if (hit.Sort is not null)
            {
                json.WritePropertyName("sort");
                JsonSerializer.Serialize(json, hit.Sort, options);
            }

            json.WriteString("shard", hit.Shard);
            json.WritePropertyName("document");
            await json.FlushAsync(cancellationToken).ConfigureAwait(false);
            var (document, reason) = await OpenDocumentAsync(hit, cancellationToken).ConfigureAwait(false);
            byte[]? bytes = null;
            if (document is not null)
            {
                using (document)
                {
                    // Read whole before any of it is written: a document that broke off midway must not
                    // leave half of itself in the answer. One document at a time.
                    try
                    {
                        bytes = await document.Content.ReadAsByteArrayAsync(cancellationToken).ConfigureAwait(false);
                    }
                    catch (Exception e) when (e is HttpRequestException or IOException && !cancellationToken.IsCancellationRequested)
                    {
                        reason = $"node {MessageText.Quote(hit.Shard)} broke off while sending it ({e.Message})";
                    }
                }
            }

            if (bytes is not null)
            {
                await body.WriteAsync(bytes, cancellationToken).ConfigureAwait(false);
            }
            else
            {
                json.WriteNullValue();
                if (reason is not null)
                {
                    unread.Add(new { id = hit.Id, shard = hit.Shard, reason });
                }
            }

            json.WriteEndObject();
            await json.FlushAsync(cancellationToken).ConfigureAwait(false);
            await body.FlushAsync(cancellationToken).ConfigureAwait(false);
        }

        json.WriteEndArray();
        if (unread.Count > 0)
        {
            json.WritePropertyName("documentsUnread");
            JsonSerializer.Serialize(json, unread, options);
        }

        json.WriteEndObject();
        await json.FlushAsync(cancellationToken).ConfigureAwait(false);
        await body.FlushAsync(cancellationToken).ConfigureAwait(false);
    }

    // The document's answer when it is there; null with no reason when it was deleted, null with the
    // reason when its owner could not give it.
    private async Task<(HttpResponseMessage? Document, string? Reason)> OpenDocumentAsync(ClusterHit hit, CancellationToken cancellationToken)
    {
        HttpResponseMessage? response = null;
        try
        {
            var url = ShardClient.UrlOf(node, hit.Shard, $"holds document {MessageText.Quote(hit.Id)}");
            using var request = shards.Request(HttpMethod.Get, url, ClusterEndpoints.ShardPrefix.TrimStart('/') + DocumentEndpoints.DocumentPath(hit.Id));
            response = await shards.SendAsync(request, hit.Shard, HttpCompletionOption.ResponseHeadersRead, cancellationToken).ConfigureAwait(false);
            if (response.StatusCode == HttpStatusCode.OK)
            {
                var ok = response;
                response = null;
                return (ok, null);
            }

            return (null, response.StatusCode == HttpStatusCode.NotFound ? null : $"node {MessageText.Quote(hit.Shard)} answered {(int)response.StatusCode}");
        }
        catch (NodeDownException e)
        {
            return (null, e.Message);
        }
        finally
        {
            response?.Dispose();
        }
    }
}
