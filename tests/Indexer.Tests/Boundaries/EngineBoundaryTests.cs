namespace Indexing.Indexer.Tests.Boundaries;

// The engine boundary holds in the compiled code: of the indexer's types, only the Lucene engine's
// refer to Lucene.Net (in a signature, a field, a local, a catch, or anything their code calls). The
// indexing loop (DocumentIndex), the manager and everything else speak to the engine through
// IIndexSink and IIndexSearcher, so another engine replaces exactly the types listed here.
public sealed class EngineBoundaryTests
{
    private static readonly HashSet<Type> _luceneEngine =
    [
        typeof(LuceneIndexSink),
        typeof(LuceneIndexSearcher),
        typeof(SearcherLease),
        typeof(LuceneDocumentMapper),
        typeof(DefinitionQueryParser),
        typeof(PatternTermQuery),
        typeof(BoundedTermsRewrite),
        typeof(BudgetedCollector),
        typeof(LuceneOnlyBuild),
        typeof(LowPriorityMergeScheduler),
    ];

    [Fact]
    public void OnlyTheLuceneEngine_RefersToLucene()
    {
        var outside = new SortedSet<string>(StringComparer.Ordinal);
        foreach (var type in typeof(DocumentIndex).Assembly.GetTypes())
        {
            var owner = TypeReferences.Outermost(type);
            if (_luceneEngine.Contains(owner))
            {
                continue;
            }

            foreach (var used in TypeReferences.Of(type).Where(IsLucene))
            {
                outside.Add($"{owner.Name} uses {used.FullName}");
            }
        }

        Assert.Empty(outside);
    }

    [Fact]
    public void EveryEngineType_RefersToLucene_SoTheCheckSeesUsesInCode()
    {
        // LuceneIndexSearcher's fields and signatures name none of Lucene's types: only its code does
        // (and its nested id cursor's).
        foreach (var type in _luceneEngine)
        {
            var nested = typeof(DocumentIndex).Assembly.GetTypes().Where(t => TypeReferences.Outermost(t) == type);
            Assert.True(nested.SelectMany(TypeReferences.Of).Any(IsLucene), $"{type.Name} refers to no Lucene type: it is not part of the engine");
        }

        Assert.DoesNotContain(typeof(LuceneIndexSearcher).GetFields(System.Reflection.BindingFlags.Instance | System.Reflection.BindingFlags.NonPublic), f => IsLucene(f.FieldType));
        Assert.Contains(TypeReferences.Of(typeof(LuceneIndexSearcher)), t => t == typeof(Lucene.Net.Search.TopScoreDocCollector));
    }

    private static bool IsLucene(Type type) => type.Assembly.GetName().Name?.StartsWith("Lucene.Net", StringComparison.Ordinal) == true;
}
