using System.Buffers;
using System.IO.Pipelines;
using Indexing.Engine;
using Indexing.Indexer;
using Indexing.Server.Hosting;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.HttpResults;
using Microsoft.AspNetCore.Routing;

namespace Indexing.Server.Http;

/// <summary>
/// <c>PUT /indexes/{name}</c> (define; a changed definition starts a side-by-side rebuild),
/// <c>GET /indexes</c>, <c>GET /indexes/{name}</c>, <c>GET /indexes/{name}/query</c>, and the
/// rebuild: <c>POST /indexes/{name}/rebuild</c> (202 + progress URL), <c>GET</c> and <c>DELETE</c>
/// (cancel) on <c>/indexes/{name}/rebuild</c>, <c>POST /indexes/{name}/verify</c>; <c>DELETE /indexes/{name}</c>
/// deletes the index.
/// <para>
/// The routes take the rest of the path whole ({**path}) rather than one segment, so that a name with
/// '/' or an empty name reaches the name rule and gets a 400 that says what is wrong with it,
/// instead of falling through routing as a bare 404. Every name is checked before the engine
/// (and so any path on disk) sees it.
/// </para>
/// </summary>
internal static class IndexEndpoints
{
    private const string QuerySuffix = "/query";
    private const string RebuildSuffix = "/rebuild";
    private const string VerifySuffix = "/verify";

    /// <summary>Definitions are a few KiB; the cap only stops a runaway body.</summary>
    public const int MaxDefinitionBytes = 1 << 20;

    public static void Map(IEndpointRouteBuilder app, IndexingEngine engine, HttpLimits limits, FailureTexts failures)
    {
        app.MapGet("/indexes", (HttpContext context) =>
            TypedResults.Ok(new IndexList([.. engine.ListIndexes().Select(s => failures.Summary(s, context))])));
        app.MapPut("/indexes/{**path}", (string? path, HttpContext context, CancellationToken cancellationToken) =>
                PutAsync(path ?? string.Empty, context, engine, failures, cancellationToken))
            .Require(ContentTypes.Json)
            .WithMetadata(new BodySizeLimit(MaxDefinitionBytes + 1));
        // Queries have a route of their own so that only they count against the query limit; a name
        // with '/' (refused by the name rule) still reaches the catch-all below and gets its 400.
        app.MapGet("/indexes/{name}" + QuerySuffix, (string name, HttpContext context) => Query(name, context, engine, limits))
            .RequireRateLimiting(RequestLimits.Queries);
        app.MapGet("/indexes/{**path}", (string? path, HttpContext context) =>
            path is not null && path.EndsWith(QuerySuffix, StringComparison.Ordinal)
                ? BadName(path[..^QuerySuffix.Length]) ?? ProblemResults.NotFound("Unknown operation", $"GET /indexes/{path} is not an operation.")
                : path is not null && path.EndsWith(RebuildSuffix, StringComparison.Ordinal)
                    ? GetRebuild(path[..^RebuildSuffix.Length], context, engine, failures)
                    : Get(path ?? string.Empty, context, engine, failures));
        app.MapPost("/indexes/{**path}", (string? path, HttpContext context, CancellationToken cancellationToken) =>
                path is not null && path.EndsWith(RebuildSuffix, StringComparison.Ordinal)
                    ? StartRebuild(path[..^RebuildSuffix.Length], context, engine, failures)
                    : path is not null && path.EndsWith(VerifySuffix, StringComparison.Ordinal)
                        ? Verify(path[..^VerifySuffix.Length], engine, cancellationToken)
                        : ProblemResults.NotFound("Unknown operation", $"POST /indexes/{path} is not an operation; POST /indexes/{{name}}/rebuild or /indexes/{{name}}/verify."))
            .RequireNoBody();
        app.MapDelete("/indexes/{**path}", (string? path, HttpContext context, CancellationToken cancellationToken) =>
                path is not null && path.EndsWith(RebuildSuffix, StringComparison.Ordinal)
                    ? CancelRebuildAsync(path[..^RebuildSuffix.Length], context, engine, failures, cancellationToken)
                    : DeleteAsync(path ?? string.Empty, context, engine, failures))
            .RequireNoBody();
    }

    private static Task<IResult> PutAsync(string name, HttpContext context, IndexingEngine engine, FailureTexts failures, CancellationToken cancellationToken) =>
        OnIndexAsync(name, () => PutValidAsync(name, context, engine, failures, cancellationToken));

    /// <summary>
    /// The definition a <c>PUT /indexes/{name}</c> carries, parsed and named <paramref name="name"/>; or
    /// the problem that refuses it (413 over <see cref="MaxDefinitionBytes"/>, 400 naming every problem).
    /// A cluster's PUT reads it the same way.
    /// </summary>
    public static async Task<(IndexDefinition? Definition, IResult? Problem)> ReadDefinitionAsync(string name, HttpRequest request, CancellationToken cancellationToken)
    {
        var tooLarge = $"the definition of index {MessageText.Quote(name)} is over {ByteSize.Format(MaxDefinitionBytes)}; definitions are a few KiB.";
        ReadResult read;
        try
        {
            read = await request.BodyReader.ReadAtLeastAsync(MaxDefinitionBytes + 1, cancellationToken).ConfigureAwait(false);
        }
        catch (BadHttpRequestException e) when (e.StatusCode == StatusCodes.Status413PayloadTooLarge)
        {
            // The endpoint's body limit (this size plus one byte) tripped first.
            return (null, ProblemResults.TooLarge(tooLarge));
        }

        byte[] body;
        try
        {
            if (read.Buffer.Length > MaxDefinitionBytes)
            {
                return (null, ProblemResults.TooLarge(tooLarge));
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
            return (null, TypedResults.Problem(
                detail: e.Message,
                statusCode: StatusCodes.Status400BadRequest,
                title: "Invalid index definition",
                extensions: new Dictionary<string, object?> { ["problems"] = e.Problems.Select(p => new { location = p.Location, message = p.Message }).ToArray() }));
        }

        if (definition.Name != name)
        {
            return (null, ProblemResults.BadRequest("Invalid index definition",
                $"the definition is named {MessageText.Quote(definition.Name)} but was sent to /indexes/{name}; the names must match (rename the definition or PUT it to /indexes/{definition.Name})."));
        }

        return (definition, null);
    }

    private static async Task<IResult> PutValidAsync(string name, HttpContext context, IndexingEngine engine, FailureTexts failures, CancellationToken cancellationToken)
    {
        var (definition, problem) = await ReadDefinitionAsync(name, context.Request, cancellationToken).ConfigureAwait(false);
        if (definition is null)
        {
            return problem!;
        }

        var result = engine.DefineIndex(definition);
        var summary = failures.Summary(engine.GetIndex(name), context);
        var location = "/indexes/" + name;
        return result switch
        {
            IndexPutResult.Created => TypedResults.Created(location, new IndexPut(result, summary)),
            IndexPutResult.Unchanged => TypedResults.Ok(new IndexPut(result, summary)),
            _ => TypedResults.Accepted(location, new IndexPut(result, summary)),
        };
    }

    private static IResult Get(string name, HttpContext context, IndexingEngine engine, FailureTexts failures) =>
        OnIndex(name, () => TypedResults.Ok(failures.Summary(engine.GetIndex(name), context)));

    private static IResult Query(string name, HttpContext context, IndexingEngine engine, HttpLimits limits) =>
        OnIndex(name, () => QueryValid(name, context, engine, limits));

    private static IResult QueryValid(string name, HttpContext context, IndexingEngine engine, HttpLimits limits)
    {
        if (!QueryRequest.TryParse(context.Request.Query, out var parsed, out var includeDocuments, out var problem))
        {
            return ProblemResults.BadRequest("Invalid query", problem);
        }

        var query = parsed with { TimeLimit = limits.QueryTimeout, MaxExpandedTerms = limits.MaxQueryTerms, MaxSortKeys = limits.MaxSortKeys };
        QueryResult result;
        try
        {
            // Documents are not read under the index's lease: QueryHitsResult reads them as it writes.
            result = engine.Query(name, query, includeDocuments: false, context.RequestAborted);
        }
        catch (QuerySyntaxException e)
        {
            return TypedResults.Problem(
                detail: e.Message,
                statusCode: StatusCodes.Status400BadRequest,
                title: "Query syntax error",
                extensions: new Dictionary<string, object?> { ["column"] = e.Column, ["query"] = e.Query });
        }
        catch (IndexException e) when (e.Kind == IndexingErrorKind.QueryTooBroad)
        {
            return ProblemResults.BadRequest("Query too broad", $"{e.Message} The limit is {ServerOptions.MaxQueryTermsSetting}.");
        }
        catch (IndexException e) when (e.Kind == IndexingErrorKind.QueryTimeout)
        {
            return ProblemResults.Unavailable("Query time limit exceeded", $"{e.Message} The limit is {ServerOptions.QueryTimeoutSetting}.");
        }
        catch (IndexException e) when (e.Kind == IndexingErrorKind.InvalidQuery && query.Sort.Count > query.MaxSortKeys)
        {
            return ProblemResults.BadRequest("Invalid query", $"{e.Message} The limit is {ServerOptions.MaxSortKeysSetting}.");
        }
        catch (Exception e) when (e is IndexException { Kind: IndexingErrorKind.InvalidQuery } or ArgumentOutOfRangeException)
        {
            return ProblemResults.BadRequest("Invalid query", e.Message.Split(" (Parameter", 2)[0]);
        }

        return new QueryHitsResult(result, includeDocuments ? engine : null, sorted: query.Sort.Count > 0);
    }

    // 202 with the progress URL; 409 naming the running rebuild when one runs.
    private static IResult StartRebuild(string name, HttpContext context, IndexingEngine engine, FailureTexts failures) =>
        OnIndex(name, () => TypedResults.Accepted($"/indexes/{name}/rebuild", failures.Progress(engine.StartRebuild(name), context)));

    private static IResult GetRebuild(string name, HttpContext context, IndexingEngine engine, FailureTexts failures) =>
        OnIndex(name, () => engine.GetRebuild(name) is { } progress
            ? TypedResults.Ok(failures.Progress(progress, context))
            : ProblemResults.NotFound("No rebuild", $"no rebuild of index {MessageText.Quote(name)} ran since the server started; GET /indexes/{name} shows how the last one ended (lastRebuild)."));

    private static Task<IResult> CancelRebuildAsync(string name, HttpContext context, IndexingEngine engine, FailureTexts failures, CancellationToken cancellationToken) =>
        OnIndexAsync(name, async () =>
        {
            try
            {
                return TypedResults.Ok(failures.Progress(await engine.CancelRebuildAsync(name, cancellationToken).ConfigureAwait(false), context));
            }
            catch (InvalidOperationException e)
            {
                return ProblemResults.Conflict("Nothing to cancel", e.Message);
            }
        });

    // 200 with what was deleted; 404 unknown, 409 when a delete of it already runs. Not cancelled by
    // the client going away: a delete runs to its end once started (its catalog write is the commit point).
    private static Task<IResult> DeleteAsync(string name, HttpContext context, IndexingEngine engine, FailureTexts failures) =>
        OnIndexAsync(name, async () =>
        {
            var deleted = await engine.DeleteIndexAsync(name).ConfigureAwait(false);
            return TypedResults.Ok(deleted with { Rebuild = failures.Progress(deleted.Rebuild, context), Note = failures.Scrub(deleted.Note) });
        });

    private static IResult Verify(string name, IndexingEngine engine, CancellationToken cancellationToken) =>
        OnIndex(name, () => TypedResults.Ok(engine.Verify(name, cancellationToken)));

    // Every handler's frame: 400 for a bad name (before anything else, so no path on disk sees it),
    // then the work, with 404 for an unknown index, 409 when a rebuild (or a verify) of it is already running, and
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
        IndexException { Kind: IndexingErrorKind.IndexNotFound } e => ProblemResults.NotFound("Unknown index", e.Message),
        IndexException { Kind: IndexingErrorKind.RebuildConflict } e => ProblemResults.Conflict("Index state conflict", e.Message),
        IndexException { Kind: IndexingErrorKind.VerifyConflict } e => ProblemResults.Conflict("Verify running", e.Message),
        // The reason names files under the data directory: readers without the key see it only
        // through the index's status, where FailureTexts withholds or scrubs it.
        IndexException { Kind: IndexingErrorKind.IndexUnavailable } e => ProblemResults.Unavailable(
            "Index unavailable",
            $"index {MessageText.Quote(e.IndexName)} cannot answer: its serving generation could not be opened at startup (GET /indexes/{e.IndexName} shows why). " +
            $"Rebuild it from the store (POST /indexes/{e.IndexName}/rebuild), or fix the cause and restart."),
        _ => null,
    };

    private static ProblemHttpResult? BadName(string name) =>
        IndexDefinition.IsValidName(name, out var problem) ? null : ProblemResults.BadRequest("Invalid index name", problem);
}

/// <summary>The body of <c>GET /indexes</c>.</summary>
internal sealed record IndexList(IReadOnlyList<IndexSummary> Indexes);

/// <summary>What <c>PUT /indexes/{name}</c> did, and the index as it is now.</summary>
internal sealed record IndexPut(IndexPutResult Result, IndexSummary Index);

