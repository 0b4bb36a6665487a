using System.Buffers;
using System.IO.Pipelines;
using System.Net;
using System.Net.Http.Headers;
using System.Text.Json;
using Indexing.Cluster;
using Indexing.Engine;
using Indexing.Indexer;
using Indexing.Server.Hosting;
using Indexing.Server.Http;
using Indexing.Server.Loading;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Routing;

namespace Indexing.Server.Cluster;

/// <summary>
/// The HTTP API of a node in cluster mode (<c>serve --cluster</c>). The paths are the single node's,
/// with the cluster behind them:
/// <list type="bullet">
/// <item><c>PUT/GET/DELETE /docs/{id}</c>: forwarded to the owner of the id's bucket (this node included)
/// at <c>/shard/docs/{id}</c>; a down owner answers 503 naming it.</item>
/// <item><c>POST /docs/bulk</c>: the lines split by owner, each owner's share written there in chunks.</item>
/// <item><c>PUT /indexes/{name}</c>: the definition, in etcd (503 without etcd's quorum); <c>GET /indexes</c>,
/// <c>GET /indexes/{name}</c> (generations and every shard's progress); <c>GET /indexes/{name}/query</c>
/// (every shard's active generation, merged: ClusterQuery); <c>POST /indexes/{name}/verify</c> (every shard).</item>
/// <item><c>GET /cluster</c>: the map, the members, etcd's reachability and this node's write gate.</item>
/// </list>
/// Each node also serves the single-node API over its own engine under <c>/shard</c>, which the nodes
/// call one another on; its writes pass the node's write gate (<see cref="ClusterNode.CanAcceptWrites"/>).
/// </summary>
internal static class ClusterEndpoints
{
    public const string ShardPrefix = "/shard";
    private const string QuerySuffix = "/query";
    private const string VerifySuffix = "/verify";

    public static void Map(WebApplication app, ClusterHost cluster, IndexingEngine engine, HttpLimits limits, FailureTexts failures)
    {
        // This node's own engine, for the other nodes (and operators): the single-node API, with the
        // write gate in front of document writes and index changes left to the cluster.
        var shard = app.MapGroup(ShardPrefix);
        shard.AddEndpointFilter(async (context, next) =>
            ShardGate(context.HttpContext, cluster) ?? await next(context).ConfigureAwait(false));
        DocumentEndpoints.Map(shard, engine, failures, () => new OwnedBulkTarget(cluster, engine));
        IndexEndpoints.Map(shard, engine, limits, failures);

        app.MapPost("/docs/bulk", (HttpContext context, CancellationToken cancellationToken) => BulkAsync(context, cluster, engine, cancellationToken))
            .Require(ContentTypes.NdJson)
            .WithMetadata(new BodySizeLimit(null));
        app.MapPut("/docs/{**id}", (string? id, HttpContext context, CancellationToken cancellationToken) => ForwardDocumentAsync(id, context, cluster, engine, cancellationToken))
            .Require(ContentTypes.Json)
            .WithMetadata(new BodySizeLimit(engine.Options.Storage.MaxDocumentBytes + (64 << 10)));
        app.MapGet("/docs/{**id}", (string? id, HttpContext context, CancellationToken cancellationToken) => ForwardDocumentAsync(id, context, cluster, engine, cancellationToken));
        app.MapDelete("/docs/{**id}", (string? id, HttpContext context, CancellationToken cancellationToken) => ForwardDocumentAsync(id, context, cluster, engine, cancellationToken))
            .RequireNoBody();

        app.MapGet("/cluster", () => cluster.Node is { } node ? TypedResults.Ok(ClusterStatus.Of(node)) : Joining());
        app.MapGet("/indexes", (HttpContext context) => cluster.Node is { } node
            ? TypedResults.Ok(new { indexes = node.Snapshot.Indexes.Values.OrderBy(i => i.Index.Name, StringComparer.Ordinal).Select(i => ClusterIndexView.Of(node, i.Index, context)) })
            : Joining());
        app.MapPut("/indexes/{name}", (string name, HttpContext context, CancellationToken cancellationToken) => DefineAsync(name, context, cluster, cancellationToken))
            .Require(ContentTypes.Json)
            .WithMetadata(new BodySizeLimit(IndexEndpoints.MaxDefinitionBytes + 1));
        app.MapGet("/indexes/{name}" + QuerySuffix, (string name, HttpContext context, CancellationToken cancellationToken) =>
            cluster.Node is { } node ? ClusterQuery.RunAsync(name, context, node, cluster.Shards, cancellationToken) : Task.FromResult(Joining()));
        app.MapGet("/indexes/{name}", (string name, HttpContext context, CancellationToken cancellationToken) => IndexViewAsync(name, cluster, context, cancellationToken));
        app.MapPost("/indexes/{name}" + VerifySuffix, (string name, CancellationToken cancellationToken) => VerifyAsync(name, cluster, cancellationToken))
            .RequireNoBody();
    }

    private static IResult Joining() =>
        ProblemResults.Unavailable("Joining the cluster", "this node has not joined its cluster yet (it is reading etcd); try again in a moment.");

    // Document writes through /shard pass the write gate, and a single document's only on its owner
    // (a misrouted write would be found twice by queries); index definitions and rebuilds there are the
    // cluster's to make (each shard's generations follow etcd), so only reads and verify go through.
    // Paths compare ignoring case, as routing does.
    private static IResult? ShardGate(HttpContext context, ClusterHost cluster)
    {
        var request = context.Request;
        if (HttpMethods.IsGet(request.Method) || HttpMethods.IsHead(request.Method))
        {
            return null;
        }

        if (request.Path.StartsWithSegments(ShardPrefix + "/indexes", StringComparison.OrdinalIgnoreCase))
        {
            return request.Path.Value!.EndsWith(VerifySuffix, StringComparison.OrdinalIgnoreCase) && HttpMethods.IsPost(request.Method)
                ? null
                : ProblemResults.Conflict(
                    "Cluster index",
                    "in a cluster, indexes are defined and rebuilt for every shard at once: PUT /indexes/{name} on any node (the shards' local generations follow etcd).");
        }

        if (cluster.Node is not { } node)
        {
            return Joining();
        }

        if (!node.CanAcceptWrites(out var reason))
        {
            return ProblemResults.Unavailable("Not accepting writes", reason!);
        }

        if (request.Path.StartsWithSegments(ShardPrefix + "/docs", StringComparison.OrdinalIgnoreCase, out var rest)
            && !(HttpMethods.IsPost(request.Method) && rest.Equals("/bulk", StringComparison.OrdinalIgnoreCase))
            && rest.HasValue && Uri.UnescapeDataString(rest.Value![1..]) is { Length: > 0 } id
            && node.OwnerOf(id) is var owner && owner != node.NodeId)
        {
            return ProblemResults.Conflict(
                "Not the owner",
                $"document {MessageText.Quote(id)} belongs to node {MessageText.Quote(owner)}, not {MessageText.Quote(node.NodeId)}; write it through /docs on any node, which forwards it to its owner.");
        }

        return null;
    }

    private static async Task<IResult> ForwardDocumentAsync(string? id, HttpContext context, ClusterHost cluster, IndexingEngine engine, CancellationToken cancellationToken)
    {
        id ??= string.Empty;
        if (!IndexingEngine.IsValidDocumentId(id, out var idError))
        {
            return ProblemResults.Invalid(idError);
        }

        if (cluster.Node is not { } node)
        {
            return Joining();
        }

        var owner = node.OwnerOf(id);
        try
        {
            var url = ShardClient.UrlOf(node, owner, $"owns the bucket of document {MessageText.Quote(id)}");
            using var request = cluster.Shards.Request(new HttpMethod(context.Request.Method), url, ShardPrefix.TrimStart('/') + DocumentEndpoints.DocumentPath(id));
            if (HttpMethods.IsPut(context.Request.Method))
            {
                // The body is read here, within the document limit, and judged by the same rules as on
                // the owner: a refusal is this node's own (413, 400), never an owner that "did not answer".
                var limit = engine.Options.Storage.MaxDocumentBytes;
                if (context.Request.ContentLength > limit)
                {
                    return ProblemResults.TooLarge(DocumentEndpoints.TooLargeMessage(id, $"{ByteSize.FormatExact(context.Request.ContentLength.Value)} (its Content-Length)", limit));
                }

                var read = await context.Request.BodyReader.ReadAtLeastAsync((int)limit + 1, cancellationToken).ConfigureAwait(false);
                byte[] body;
                try
                {
                    if (read.Buffer.Length > limit)
                    {
                        return ProblemResults.TooLarge(DocumentEndpoints.TooLargeMessage(id, $"more than {ByteSize.FormatExact(limit)}", limit));
                    }

                    body = read.Buffer.ToArray();
                }
                finally
                {
                    context.Request.BodyReader.AdvanceTo(read.Buffer.End);
                }

                if (!engine.IsValidDocument(id, body, out var bodyError))
                {
                    return ProblemResults.Invalid(bodyError);
                }

                request.Content = new ByteArrayContent(body);
                request.Content.Headers.ContentType = new MediaTypeHeaderValue("application/json");
            }

            using var response = await cluster.Shards.SendAsync(request, owner, HttpCompletionOption.ResponseHeadersRead, cancellationToken).ConfigureAwait(false);
            await CopyAsync(response, context, cancellationToken).ConfigureAwait(false);
            return Results.Empty;
        }
        catch (BadHttpRequestException e) when (e.StatusCode == StatusCodes.Status413PayloadTooLarge)
        {
            return ProblemResults.TooLarge(DocumentEndpoints.TooLargeMessage(id, $"more than {ByteSize.FormatExact(engine.Options.Storage.MaxDocumentBytes)}", engine.Options.Storage.MaxDocumentBytes));
        }
        catch (NodeDownException e)
        {
            return ProblemResults.Unavailable("Owner down", e.Message);
        }
    }

    // The owner's answer as this node's: status, the headers a client uses, and the body streamed.
    private static async Task CopyAsync(HttpResponseMessage response, HttpContext context, CancellationToken cancellationToken)
    {
        var answer = context.Response;
        answer.StatusCode = (int)response.StatusCode;
        if (response.Headers.ETag is { } etag)
        {
            answer.Headers.ETag = etag.ToString();
        }

        if (response.Headers.Location is { } location)
        {
            var path = location.OriginalString;
            answer.Headers.Location = path.StartsWith(ShardPrefix + "/", StringComparison.Ordinal) ? path[ShardPrefix.Length..] : path;
        }

        if (response.Content.Headers.ContentType is { } type)
        {
            answer.ContentType = type.ToString();
        }

        if (response.Content.Headers.ContentLength is { } length)
        {
            answer.ContentLength = length;
        }

        await response.Content.CopyToAsync(answer.Body, cancellationToken).ConfigureAwait(false);
    }

    // The load's lines are read, judged and gathered in chunks as on a single node (BulkLoad); each
    // chunk goes to its owners. An owner that is down stops the load with a 503 naming it and counting
    // what the owners stored before: puts by id, so sending the whole load again is safe.
    private static async Task<IResult> BulkAsync(HttpContext context, ClusterHost cluster, IndexingEngine engine, CancellationToken cancellationToken)
    {
        if (cluster.Node is not { } node)
        {
            return Joining();
        }

        var target = new ClusterBulkTarget(node, cluster.Shards, engine);
        try
        {
            var result = await BulkLoad.LoadAsync(context.Request.BodyReader, target, ServerOptions.MaxDocumentBytesSetting, progress: null, cancellationToken).ConfigureAwait(false);
            return TypedResults.Ok(result);
        }
        catch (NodeDownException e)
        {
            return ProblemResults.Unavailable(
                "Owner down",
                $"{e.Message} The load stopped there: {target.Stored:N0} documents of it were stored by their owners before. Writes are puts by id, so the whole load can be sent again.");
        }
        catch (ShardRefusedException e)
        {
            return TypedResults.Problem(
                statusCode: e.Status,
                title: "Owner refused",
                detail: $"{e.Message} The load stopped there: {target.Stored:N0} documents of it were stored by their owners before. Writes are puts by id, so the whole load can be sent again.");
        }
    }

    private static async Task<IResult> DefineAsync(string name, HttpContext context, ClusterHost cluster, CancellationToken cancellationToken)
    {
        if (!IndexDefinition.IsValidName(name, out var badName))
        {
            return ProblemResults.BadRequest("Invalid index name", badName!);
        }

        if (cluster.Node is not { } node)
        {
            return Joining();
        }

        var (definition, problem) = await IndexEndpoints.ReadDefinitionAsync(name, context.Request, cancellationToken).ConfigureAwait(false);
        if (definition is null)
        {
            return problem!;
        }

        try
        {
            var outcome = await node.DefineAsync(definition, cancellationToken).ConfigureAwait(false);
            var view = ClusterIndexView.Of(node, outcome.Index, context) with { Result = outcome.Result.ToString() };
            return outcome.Result switch
            {
                DefineResult.Created => TypedResults.Created($"/indexes/{name}", view),
                DefineResult.Unchanged => TypedResults.Ok(view),
                _ => TypedResults.Accepted($"/indexes/{name}", view),
            };
        }
        catch (ArgumentException e)
        {
            return ProblemResults.BadRequest("Invalid index definition", e.Message);
        }
        catch (ClusterUnavailableException e)
        {
            return ProblemResults.Unavailable(
                "Cluster state unavailable",
                $"{e.Message}. Definition changes need etcd's quorum and wait for it; nothing changed. Documents and queries go on.");
        }
    }

    private static async Task<IResult> IndexViewAsync(string name, ClusterHost cluster, HttpContext context, CancellationToken cancellationToken)
    {
        if (cluster.Node is not { } node)
        {
            return Joining();
        }

        var snapshot = node.Snapshot.Indexes.ContainsKey(name) ? node.Snapshot : await node.RefreshAsync(cancellationToken).ConfigureAwait(false);
        return snapshot.Indexes.TryGetValue(name, out var index)
            ? TypedResults.Ok(ClusterIndexView.Of(node, index.Index, context))
            : ProblemResults.NotFound("Unknown index", $"the cluster has no index {MessageText.Quote(name)}; define it with PUT /indexes/{name}.");
    }

    // Verify on every shard, of the active generation: the cluster is consistent when each shard is.
    private static async Task<IResult> VerifyAsync(string name, ClusterHost cluster, CancellationToken cancellationToken)
    {
        if (cluster.Node is not { } node)
        {
            return Joining();
        }

        var snapshot = node.Snapshot.Indexes.ContainsKey(name) ? node.Snapshot : await node.RefreshAsync(cancellationToken).ConfigureAwait(false);
        if (!snapshot.Indexes.TryGetValue(name, out var index))
        {
            return ProblemResults.NotFound("Unknown index", $"the cluster has no index {MessageText.Quote(name)}.");
        }

        var generation = index.Index.Active.Generation;
        var local = ClusterNode.LocalName(name, generation);
        try
        {
            var shards = await Task.WhenAll(node.Map.Nodes.Select(async owner =>
            {
                var url = ShardClient.UrlOf(node, owner, $"holds a shard of index {MessageText.Quote(name)}");
                using var request = cluster.Shards.Request(HttpMethod.Post, url, $"shard/indexes/{local}/verify");
                using var response = await cluster.Shards.SendAsync(request, owner, HttpCompletionOption.ResponseContentRead, cancellationToken).ConfigureAwait(false);
                var json = await response.Content.ReadAsStringAsync(cancellationToken).ConfigureAwait(false);
                return new ShardVerify(owner, (int)response.StatusCode, JsonDocument.Parse(json).RootElement.Clone());
            })).ConfigureAwait(false);
            var consistent = shards.All(s => s.Status == 200 && s.Report.TryGetProperty("isConsistent", out var ok) && ok.GetBoolean());
            return TypedResults.Ok(new { index = name, generation, isConsistent = consistent, shards });
        }
        catch (NodeDownException e)
        {
            return ProblemResults.Unavailable("Shard down", e.Message);
        }
    }

    private sealed record ShardVerify(string Node, int Status, JsonElement Report);
}

/// <summary>The node once it has joined (null while it joins), and the client it calls the shards with.</summary>
internal sealed class ClusterHost(ShardClient shards) : IAsyncDisposable
{
    private ClusterNode? _node;

    public ClusterNode? Node
    {
        get => Volatile.Read(ref _node);
        set => Volatile.Write(ref _node, value);
    }

    public ShardClient Shards { get; } = shards;

    public async ValueTask DisposeAsync()
    {
        if (Node is { } node)
        {
            await node.DisposeAsync().ConfigureAwait(false);
        }

        Shards.Dispose();
    }
}

/// <summary>
/// A shard's own bulk target: the engine, refusing a chunk with a document this node does not own
/// (409 naming the owner) before writing any of it, and any chunk while the write gate is closed (503).
/// </summary>
internal sealed class OwnedBulkTarget(ClusterHost cluster, IndexingEngine engine) : IBulkTarget
{
    private readonly EngineTarget _engine = new(engine);

    public long MaxDocumentBytes => _engine.MaxDocumentBytes;

    public bool IsValid(string id, ReadOnlySpan<byte> body, [System.Diagnostics.CodeAnalysis.NotNullWhen(false)] out Indexing.Storage.DocumentValidationError? error) =>
        _engine.IsValid(id, body, out error);

    public Indexing.Storage.BulkWriteResult PutMany(IReadOnlyList<Indexing.Storage.DocumentWrite> documents, CancellationToken cancellationToken)
    {
        var node = cluster.Node ?? throw new BulkTargetRefusedException(StatusCodes.Status503ServiceUnavailable, "Joining the cluster", "this node has not joined its cluster yet; nothing of this chunk was written.");
        if (!node.CanAcceptWrites(out var reason))
        {
            throw new BulkTargetRefusedException(StatusCodes.Status503ServiceUnavailable, "Not accepting writes", reason!);
        }

        foreach (var document in documents)
        {
            if (node.OwnerOf(document.Id) is var owner && owner != node.NodeId)
            {
                throw new BulkTargetRefusedException(
                    StatusCodes.Status409Conflict,
                    "Not the owner",
                    $"document {MessageText.Quote(document.Id)} belongs to node {MessageText.Quote(owner)}, not {MessageText.Quote(node.NodeId)}; nothing of this chunk was written. Load through /docs/bulk on any node, which splits a load by owner.");
            }
        }

        return _engine.PutMany(documents, cancellationToken);
    }
}

/// <summary>A shard refused a chunk of a bulk load (its status and problem detail).</summary>
internal sealed class ShardRefusedException(int status, string message) : Exception(message)
{
    public int Status { get; } = status;
}
