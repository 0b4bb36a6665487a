using System.Buffers;
using System.IO.Pipelines;
using Indexing.Indexer;
using Indexing.Storage;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.HttpResults;
using Microsoft.AspNetCore.Routing;

namespace Indexing.Server.Http;

/// <summary>
/// <c>PUT /indexes/{name}</c> (define; a changed definition starts a side-by-side rebuild),
/// <c>GET /indexes</c>, <c>GET /indexes/{name}</c>, <c>GET /indexes/{name}/query</c>, and the
/// rebuild: <c>POST /indexes/{name}/rebuild</c> (202 + progress URL), <c>GET</c> and <c>DELETE</c>
/// (cancel) on <c>/indexes/{name}/rebuild</c>, <c>POST /indexes/{name}/verify</c>.
/// <para>
/// The routes take the rest of the path whole ({**path}) rather than one segment, so that a name with
/// '/' or an empty name reaches the name rule and gets a 400 that says what is wrong with it,
/// instead of falling through routing as a bare 404. Every name is checked before the index manager
/// (and so any path on disk) sees it.
/// </para>
/// </summary>
internal static class IndexEndpoints
{
    private const string QuerySuffix = "/query";
    private const string RebuildSuffix = "/rebuild";
    private const string VerifySuffix = "/verify";

    // Definitions are a few KiB; the cap only stops a runaway body.
    private const int MaxDefinitionBytes = 1 << 20;

    public static void Map(IEndpointRouteBuilder app, IndexManager indexes)
    {
        app.MapGet("/indexes", () => TypedResults.Ok(new IndexList([.. indexes.Names.Select(SummaryOrNull).OfType<IndexSummary>()])));
        app.MapPut("/indexes/{**path}", (string? path, HttpRequest request, CancellationToken cancellationToken) =>
            PutAsync(path ?? string.Empty, request, indexes, cancellationToken));
        app.MapGet("/indexes/{**path}", (string? path, HttpRequest request) =>
            path is not null && path.EndsWith(QuerySuffix, StringComparison.Ordinal)
                ? Query(path[..^QuerySuffix.Length], request, indexes)
                : path is not null && path.EndsWith(RebuildSuffix, StringComparison.Ordinal)
                    ? GetRebuild(path[..^RebuildSuffix.Length], indexes)
                    : Get(path ?? string.Empty, indexes));
        app.MapPost("/indexes/{**path}", (string? path, CancellationToken cancellationToken) =>
            path is not null && path.EndsWith(RebuildSuffix, StringComparison.Ordinal)
                ? StartRebuild(path[..^RebuildSuffix.Length], indexes)
                : path is not null && path.EndsWith(VerifySuffix, StringComparison.Ordinal)
                    ? Verify(path[..^VerifySuffix.Length], indexes, cancellationToken)
                    : ProblemResults.NotFound("Unknown operation", $"POST /indexes/{path} is not an operation; POST /indexes/{{name}}/rebuild or /indexes/{{name}}/verify."));
        app.MapDelete("/indexes/{**path}", (string? path, CancellationToken cancellationToken) =>
            path is not null && path.EndsWith(RebuildSuffix, StringComparison.Ordinal)
                ? CancelRebuildAsync(path[..^RebuildSuffix.Length], indexes, cancellationToken)
                : Task.FromResult<IResult>(ProblemResults.NotFound("Unknown operation", $"DELETE /indexes/{path} is not an operation; DELETE /indexes/{{name}}/rebuild cancels a rebuild.")));

        IndexSummary? SummaryOrNull(string name)
        {
            try
            {
                return indexes.GetSummary(name);
            }
            catch (IndexNotFoundException)
            {
                // Removed between listing the names and reading it.
                return null;
            }
        }
    }

    private static Task<IResult> PutAsync(string name, HttpRequest request, IndexManager indexes, CancellationToken cancellationToken) =>
        OnIndexAsync(name, () => PutValidAsync(name, request, indexes, cancellationToken));

    private static async Task<IResult> PutValidAsync(string name, HttpRequest request, IndexManager indexes, CancellationToken cancellationToken)
    {
        var read = await request.BodyReader.ReadAtLeastAsync(MaxDefinitionBytes + 1, cancellationToken).ConfigureAwait(false);
        byte[] body;
        try
        {
            if (read.Buffer.Length > MaxDefinitionBytes)
            {
                return ProblemResults.TooLarge($"the definition of index {MessageText.Quote(name)} is over {ByteSize.Format(MaxDefinitionBytes)}; definitions are a few KiB.");
            }

            body = read.Buffer.ToArray();
        }
        finally
        {
            request.BodyReader.AdvanceTo(read.Buffer.End);
        }

        IndexDefinition definition;
        try
        {
            definition = IndexDefinition.Parse(body);
        }
        catch (IndexDefinitionException e)
        {
            return TypedResults.Problem(
                detail: e.Message,
                statusCode: StatusCodes.Status400BadRequest,
                title: "Invalid index definition",
                extensions: new Dictionary<string, object?> { ["problems"] = e.Problems.Select(p => new { location = p.Location, message = p.Message }).ToArray() });
        }

        if (definition.Name != name)
        {
            return ProblemResults.BadRequest("Invalid index definition",
                $"the definition is named {MessageText.Quote(definition.Name)} but was sent to /indexes/{name}; the names must match (rename the definition or PUT it to /indexes/{definition.Name}).");
        }

        var result = indexes.CreateOrUpdate(definition);
        var summary = indexes.GetSummary(name);
        var location = "/indexes/" + name;
        return result switch
        {
            IndexPutResult.Created => TypedResults.Created(location, new IndexPut(result, summary)),
            IndexPutResult.Unchanged => TypedResults.Ok(new IndexPut(result, summary)),
            _ => TypedResults.Accepted(location, new IndexPut(result, summary)),
        };
    }

    private static IResult Get(string name, IndexManager indexes) =>
        OnIndex(name, () => TypedResults.Ok(indexes.GetSummary(name)));

    private static IResult Query(string name, HttpRequest request, IndexManager indexes) =>
        OnIndex(name, () => QueryValid(name, request, indexes));

    private static IResult QueryValid(string name, HttpRequest request, IndexManager indexes)
    {
        if (!QueryRequest.TryParse(request.Query, out var query, out var includeDocuments, out var problem))
        {
            return ProblemResults.BadRequest("Invalid query", problem);
        }

        QueryResult result;
        try
        {
            result = indexes.Query(name, query, includeDocuments);
        }
        catch (QuerySyntaxException e)
        {
            return TypedResults.Problem(
                detail: e.Message,
                statusCode: StatusCodes.Status400BadRequest,
                title: "Query syntax error",
                extensions: new Dictionary<string, object?> { ["column"] = e.Column, ["query"] = e.Query });
        }
        catch (Exception e) when (e is InvalidQueryException or ArgumentOutOfRangeException)
        {
            return ProblemResults.BadRequest("Invalid query", e.Message.Split(" (Parameter", 2)[0]);
        }

        return TypedResults.Ok(new QueryResponse(
            result.TotalHits,
            [.. result.Hits.Select((hit, i) => new QueryResponseHit(hit.Id, hit.Score, hit.Etag, includeDocuments && result.Documents[i] is { } document ? new RawJson(document.Body) : null))]));
    }

    // 202 with the progress URL; 409 naming the running rebuild when one runs.
    private static IResult StartRebuild(string name, IndexManager indexes) =>
        OnIndex(name, () => TypedResults.Accepted($"/indexes/{name}/rebuild", indexes.StartRebuild(name)));

    private static IResult GetRebuild(string name, IndexManager indexes) =>
        OnIndex(name, () => indexes.GetRebuild(name) is { } progress
            ? TypedResults.Ok(progress)
            : ProblemResults.NotFound("No rebuild", $"no rebuild of index {MessageText.Quote(name)} ran since the server started; GET /indexes/{name} shows how the last one ended (lastRebuild)."));

    private static Task<IResult> CancelRebuildAsync(string name, IndexManager indexes, CancellationToken cancellationToken) =>
        OnIndexAsync(name, async () =>
        {
            try
            {
                return TypedResults.Ok(await indexes.CancelRebuildAsync(name, cancellationToken).ConfigureAwait(false));
            }
            catch (InvalidOperationException e)
            {
                return ProblemResults.Conflict("Nothing to cancel", e.Message);
            }
        });

    private static IResult Verify(string name, IndexManager indexes, CancellationToken cancellationToken) =>
        OnIndex(name, () => TypedResults.Ok(indexes.Verify(name, cancellationToken)));

    // Every handler's frame: 400 for a bad name (before anything else, so no path on disk sees it),
    // then the work, with 404 for an unknown index, 409 when a rebuild of it is already running, and
    // 503 when its serving generation could not be opened (a rebuild replaces it).
    private static IResult OnIndex(string name, Func<IResult> work)
    {
        if (BadName(name) is { } badName)
        {
            return badName;
        }

        try
        {
            return work();
        }
        catch (Exception e) when (IndexProblem(e) is { } problem)
        {
            return problem;
        }
    }

    private static async Task<IResult> OnIndexAsync(string name, Func<Task<IResult>> work)
    {
        if (BadName(name) is { } badName)
        {
            return badName;
        }

        try
        {
            return await work().ConfigureAwait(false);
        }
        catch (Exception e) when (IndexProblem(e) is { } problem)
        {
            return problem;
        }
    }

    private static ProblemHttpResult? IndexProblem(Exception exception) => exception switch
    {
        IndexNotFoundException e => ProblemResults.NotFound("Unknown index", e.Message),
        RebuildConflictException e => ProblemResults.Conflict("Rebuild already running", e.Message),
        IndexUnavailableException e => ProblemResults.Unavailable("Index unavailable", e.Message),
        _ => null,
    };

    private static ProblemHttpResult? BadName(string name) =>
        IndexDefinition.IsValidName(name, out var problem) ? null : ProblemResults.BadRequest("Invalid index name", problem);
}

/// <summary>The body of <c>GET /indexes</c>.</summary>
internal sealed record IndexList(IReadOnlyList<IndexSummary> Indexes);

/// <summary>What <c>PUT /indexes/{name}</c> did, and the index as it is now.</summary>
internal sealed record IndexPut(IndexPutResult Result, IndexSummary Index);

/// <summary>The body of a query: total hits and the page, each hit with its document when asked for (include=docs).</summary>
internal sealed record QueryResponse(long TotalHits, IReadOnlyList<QueryResponseHit> Hits);

/// <summary>One hit; <see cref="Document"/> is the stored JSON body, or null when not asked for or deleted since.</summary>
internal sealed record QueryResponseHit(string Id, float Score, long Etag, RawJson? Document);
