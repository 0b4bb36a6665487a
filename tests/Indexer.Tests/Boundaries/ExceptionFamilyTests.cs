namespace Indexing.Indexer.Tests.Boundaries;

// One exception family: everything the indexer throws on purpose derives from IndexException and
// names the index, and IndexException is one of the families under the engine's one root,
// IndexingException, whose Kind a host switches on; misuse of its API stays with the BCL's exceptions
// (see src/Indexer/IndexExceptions.cs).
public sealed class ExceptionFamilyTests
{
    [Fact]
    public void EveryIndexException_IsSealed_OneLevelDown_AndOnlyThoseWithDetailsArePublic()
    {
        var exceptions = typeof(DocumentIndex).Assembly.GetTypes()
            .Where(t => typeof(IndexException).IsAssignableFrom(t))
            .ToList();

        Assert.Equal(
            [
                nameof(IndexDefinitionException), nameof(IndexException), nameof(IndexNotFoundException), nameof(IndexReadException),
                nameof(IndexUnavailableException), nameof(IndexWriteException), nameof(InvalidQueryException), nameof(QueryExpansionException),
                nameof(QuerySyntaxException), nameof(QueryTimeoutException), nameof(RebuildConflictException), nameof(VerifyConflictException),
            ],
            exceptions.Select(t => t.Name).Order(StringComparer.Ordinal));
        Assert.Equal(
            [nameof(IndexDefinitionException), nameof(IndexException), nameof(QuerySyntaxException)],
            exceptions.Where(t => t.IsPublic).Select(t => t.Name).Order(StringComparer.Ordinal));
        Assert.Equal(typeof(IndexingException), typeof(IndexException).BaseType);
        Assert.True(typeof(IndexException).IsAbstract);
        Assert.All(exceptions.Where(t => t != typeof(IndexException)), t =>
        {
            Assert.Equal(typeof(IndexException), t.BaseType);
            Assert.True(t.IsSealed, $"{t.Name} is not sealed");
        });
    }

    // A host sees the public families and switches on Kind: each internal type says which case it is.
    public static TheoryData<string, IndexingErrorKind> Kinds => new()
    {
        { nameof(IndexNotFoundException), IndexingErrorKind.IndexNotFound },
        { nameof(IndexUnavailableException), IndexingErrorKind.IndexUnavailable },
        { nameof(RebuildConflictException), IndexingErrorKind.RebuildConflict },
        { nameof(VerifyConflictException), IndexingErrorKind.VerifyConflict },
        { nameof(InvalidQueryException), IndexingErrorKind.InvalidQuery },
        { nameof(QuerySyntaxException), IndexingErrorKind.InvalidQuery },
        { nameof(QueryExpansionException), IndexingErrorKind.QueryTooBroad },
        { nameof(QueryTimeoutException), IndexingErrorKind.QueryTimeout },
        { nameof(IndexDefinitionException), IndexingErrorKind.InvalidDefinition },
        { nameof(IndexReadException), IndexingErrorKind.Failure },
        { nameof(IndexWriteException), IndexingErrorKind.Failure },
        { nameof(Storage.StoreFullException), IndexingErrorKind.StoreFull },
        { nameof(Storage.DocumentValidationException), IndexingErrorKind.InvalidDocument },
        { nameof(Storage.DocumentStoreException), IndexingErrorKind.Failure },
        { nameof(Prefetcher.PrefetchReadException), IndexingErrorKind.Failure },
    };

    [Theory]
    [MemberData(nameof(Kinds))]
    public void EachException_CarriesItsKind(string type, IndexingErrorKind kind)
    {
        IndexingException exception = type switch
        {
            nameof(IndexNotFoundException) => new IndexNotFoundException("orders"),
            nameof(IndexUnavailableException) => new IndexUnavailableException("orders", 3, "locked"),
            nameof(RebuildConflictException) => RebuildConflictException.BeingDeleted("orders"),
            nameof(VerifyConflictException) => new VerifyConflictException("orders", DateTimeOffset.UnixEpoch),
            nameof(InvalidQueryException) => new InvalidQueryException("orders", "no field 'x'"),
            nameof(QuerySyntaxException) => new QuerySyntaxException("orders", "a:(", 3, "unexpected end", null),
            nameof(QueryExpansionException) => new QueryExpansionException("orders", "wildcard 'a:*'", 10),
            nameof(QueryTimeoutException) => new QueryTimeoutException("orders", "a:*", TimeSpan.FromSeconds(1)),
            nameof(IndexDefinitionException) => new IndexDefinitionException("orders", [new IndexDefinitionProblem("fields", "empty")]),
            nameof(IndexReadException) => new IndexReadException("orders", "search failed", null),
            nameof(IndexWriteException) => new IndexWriteException("orders", "orders/1", "flush failed", null),
            nameof(Storage.StoreFullException) => new Storage.StoreFullException("no space", "/data/store", 0, 64L << 20, null),
            nameof(Storage.DocumentValidationException) => new Storage.DocumentValidationException(
                new Storage.DocumentValidationError("orders/1", Storage.DocumentValidationRule.BodyNotObject, "not an object")),
            nameof(Storage.DocumentStoreException) => new Storage.DocumentStoreException("read failed"),
            nameof(Prefetcher.PrefetchReadException) => Prefetcher.PrefetchReadException.ForScan(null, new IOException("read failed")),
            _ => throw new ArgumentOutOfRangeException(nameof(type), type, "no such exception type in this test"),
        };

        Assert.Equal(kind, exception.Kind);
    }

    [Fact]
    public void EveryEngineException_IsAnIndexingException_InOneOfItsFamilies()
    {
        var exceptions = typeof(DocumentIndex).Assembly.GetTypes()
            .Where(t => typeof(IndexingException).IsAssignableFrom(t))
            .ToList();
        Type[] families = [typeof(Storage.DocumentStoreException), typeof(Storage.DocumentValidationException), typeof(Prefetcher.PrefetchReadException), typeof(IndexException)];

        Assert.All(families, f => Assert.Equal(typeof(IndexingException), f.BaseType));
        Assert.All(exceptions.Where(t => t != typeof(IndexingException)), t =>
            Assert.True(families.Any(f => f.IsAssignableFrom(t)), $"{t.Name} is in no family under IndexingException"));
        Assert.Equal(
            [
                nameof(Storage.DocumentStoreException), nameof(Storage.DocumentValidationException), nameof(IndexDefinitionException),
                nameof(IndexException), nameof(IndexingException), nameof(QuerySyntaxException),
            ],
            typeof(DocumentIndex).Assembly.GetExportedTypes().Where(t => typeof(Exception).IsAssignableFrom(t)).Select(t => t.Name).Order(StringComparer.Ordinal));
    }
}
