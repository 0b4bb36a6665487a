namespace Indexing.Indexer.Tests.Boundaries;

// One exception family: everything the indexer throws on purpose derives from IndexException and
// names the index, and IndexException is one of the families under the engine's one root,
// IndexingException; misuse of its API stays with the BCL's exceptions (see src/Indexer/IndexExceptions.cs).
public sealed class ExceptionFamilyTests
{
    [Fact]
    public void EveryPublicException_IsAnIndexException_OneLevelDown()
    {
        var exceptions = typeof(DocumentIndex).Assembly.GetExportedTypes()
            .Where(t => typeof(IndexException).IsAssignableFrom(t))
            .ToList();

        Assert.Equal(
            [
                nameof(IndexDefinitionException), nameof(IndexException), nameof(IndexNotFoundException), nameof(IndexReadException),
                nameof(IndexUnavailableException), nameof(IndexWriteException), nameof(InvalidQueryException), nameof(QueryExpansionException),
                nameof(QuerySyntaxException), nameof(QueryTimeoutException), nameof(RebuildConflictException), nameof(VerifyConflictException),
            ],
            exceptions.Select(t => t.Name).Order(StringComparer.Ordinal));
        Assert.Equal(typeof(IndexingException), typeof(IndexException).BaseType);
        Assert.True(typeof(IndexException).IsAbstract);
        Assert.All(exceptions.Where(t => t != typeof(IndexException)), t =>
        {
            Assert.Equal(typeof(IndexException), t.BaseType);
            Assert.True(t.IsSealed, $"{t.Name} is not sealed");
        });
    }

    [Fact]
    public void EveryPublicException_IsAnIndexingException_InOneOfItsFamilies()
    {
        var exceptions = typeof(DocumentIndex).Assembly.GetExportedTypes().Where(t => typeof(Exception).IsAssignableFrom(t)).ToList();
        Type[] families = [typeof(Storage.DocumentStoreException), typeof(Storage.DocumentValidationException), typeof(Prefetcher.PrefetchReadException), typeof(IndexException)];

        Assert.All(families, f => Assert.Equal(typeof(IndexingException), f.BaseType));
        Assert.All(exceptions.Where(t => t != typeof(IndexingException)), t =>
            Assert.True(families.Any(f => f.IsAssignableFrom(t)), $"{t.Name} is in no family under IndexingException"));
    }
}
