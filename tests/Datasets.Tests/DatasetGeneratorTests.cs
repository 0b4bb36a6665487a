using System.Diagnostics;
using System.Text.Json;
using Indexing.Storage;

namespace Indexing.Datasets.Tests;

public sealed class DatasetGeneratorTests
{
    private const long StoreLimitBytes = 64L << 20;

    [Fact]
    public void Generate_SameSpecTwice_ByteIdentical()
    {
        var spec = new DatasetSpec(DatasetShape.LogNormal, documentCount: 300, seed: 5);

        var first = DatasetGenerator.Generate(spec).ToList();
        var second = DatasetGenerator.Generate(spec).ToList();

        Assert.Equal(300, first.Count);
        Assert.Equal(first.Select(d => d.Id), second.Select(d => d.Id));
        Assert.All(first.Zip(second), pair => Assert.True(pair.First.Utf8Json.AsSpan().SequenceEqual(pair.Second.Utf8Json)));
    }

    [Fact]
    public void Generate_DifferentSeed_DifferentDocuments()
    {
        var a = DatasetGenerator.Generate(new DatasetSpec(DatasetShape.LogNormal, documentCount: 50, seed: 1)).ToList();
        var b = DatasetGenerator.Generate(new DatasetSpec(DatasetShape.LogNormal, documentCount: 50, seed: 2)).ToList();

        Assert.Equal(a.Select(d => d.Id), b.Select(d => d.Id));
        Assert.NotEqual(a.Select(d => d.SizeBytes), b.Select(d => d.SizeBytes));
        Assert.All(a.Zip(b), pair => Assert.False(pair.First.Utf8Json.AsSpan().SequenceEqual(pair.Second.Utf8Json)));
    }

    [Theory]
    [MemberData(nameof(Shapes.All), MemberType = typeof(Shapes))]
    public void Generate_EveryDocument_PassesStoreRulesInKeyOrder(DatasetShape shape)
    {
        var spec = new DatasetSpec(shape, documentCount: 600, seed: 11);
        string? previous = null;

        foreach (var document in DatasetGenerator.Generate(spec))
        {
            DocumentIds.Validate(document.Id);
            DocumentBodies.Validate(document.Id, document.Utf8Json, StoreLimitBytes);
            Assert.True(previous is null || DocumentIds.CompareKeyOrder(previous, document.Id) < 0, $"{previous} is not before {document.Id}");
            previous = document.Id;
        }

        Assert.Equal("orders/00000600", previous);
    }

    [Theory]
    [MemberData(nameof(Shapes.All), MemberType = typeof(Shapes))]
    public void Generate_BodySizes_EqualPlannedSizesExactly(DatasetShape shape)
    {
        var spec = new DatasetSpec(shape, documentCount: 400, seed: 3);

        Assert.Equal(DatasetGenerator.PlannedSizes(spec), Shapes.GeneratedSizes(spec));
    }

    [Fact]
    public void Generate_SmallestDocuments_FitTheSmallestLayout()
    {
        Assert.True(
            OrderComposer.SmallestLayoutBytes <= DatasetSpec.MinDocumentBytes,
            $"the smallest layout needs {OrderComposer.SmallestLayoutBytes} bytes, more than MinDocumentBytes");

        // About 8% of log-normal sizes sit at the 512-byte floor; each must be valid and exact.
        var smallest = DatasetGenerator.Generate(new DatasetSpec(DatasetShape.LogNormal, documentCount: 2000, seed: 9))
            .Where(d => d.SizeBytes == DatasetSpec.MinDocumentBytes)
            .ToList();
        Assert.InRange(smallest.Count, 80, 300);
        Assert.All(smallest, d => DocumentBodies.Validate(d.Id, d.Utf8Json, StoreLimitBytes));
    }

    [Fact]
    public void Generate_SmallMaxDocumentBytes_ClampsEveryDocument()
    {
        var spec = new DatasetSpec(DatasetShape.RareGiants, documentCount: 400, maxDocumentBytes: 1L << 20);

        var sizes = Shapes.GeneratedSizes(spec);

        Assert.All(sizes, size => Assert.InRange(size, DatasetSpec.MinDocumentBytes, 1L << 20));
        Assert.Equal(2, sizes.Count(size => size == 1L << 20));
    }

    [Fact]
    public void Generate_TenFromTenMillion_IsLazyAndSmall()
    {
        var spec = new DatasetSpec(DatasetShape.Uniform, documentCount: 10_000_000);
        var clock = Stopwatch.StartNew();
        var before = GC.GetAllocatedBytesForCurrentThread();

        var first = DatasetGenerator.Generate(spec).Take(10).ToList();

        var allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.Equal(10, first.Count);
        // Loose: ten documents take milliseconds, the whole dataset many minutes.
        Assert.True(clock.Elapsed < TimeSpan.FromSeconds(30), $"took {clock.Elapsed}");
        // Vocabularies and tables are about 2 MiB; the whole dataset would be about 40 GB.
        Assert.True(allocated < 16L << 20, $"allocated {allocated:N0} bytes");
    }

    [Fact]
    public void GenerateAndPlannedSizes_NullSpec_ThrowImmediately()
    {
        Assert.Throws<ArgumentNullException>(() => DatasetGenerator.Generate(null!));
        Assert.Throws<ArgumentNullException>(() => DatasetGenerator.PlannedSizes(null!));
    }

    [Fact]
    public void Generate_TargetBytesOnly_StopsAtFirstDocumentReachingIt()
    {
        const long Target = 3L << 20;
        var sizes = Shapes.GeneratedSizes(new DatasetSpec(DatasetShape.LogNormal, targetTotalBytes: Target));

        Assert.True(sizes.Sum() >= Target);
        Assert.True(sizes.Sum() - sizes[^1] < Target);
    }

    [Fact]
    public void Generate_BothLimits_WhicheverComesFirst()
    {
        var byCount = DatasetGenerator.PlannedSizes(new DatasetSpec(DatasetShape.Uniform, documentCount: 10, targetTotalBytes: 1L << 30)).Count();
        var byBytes = DatasetGenerator.PlannedSizes(new DatasetSpec(DatasetShape.Uniform, documentCount: 1_000_000, targetTotalBytes: 100 * 4096)).Count();

        Assert.Equal(10, byCount);
        Assert.InRange(byBytes, 95, 105);
    }

    [Fact]
    public void Generate_BytesOnlyGrowing_ReachesTargetNearPlannedCount()
    {
        var spec = new DatasetSpec(DatasetShape.Growing, targetTotalBytes: 64L << 20);

        var count = DatasetGenerator.PlannedSizes(spec).Count();

        Assert.InRange(count, spec.PlannedDocumentCount * 0.95, spec.PlannedDocumentCount * 1.05);
    }

    [Fact]
    public void Generate_CustomCollectionAndWideCount_IdsPaddedAndPrefixed()
    {
        var spec = new DatasetSpec(DatasetShape.Uniform, documentCount: 123_456_789_012, collection: "line-items");

        var ids = DatasetGenerator.Generate(spec).Take(2).Select(d => d.Id).ToList();

        Assert.Equal(["line-items/000000000001", "line-items/000000000002"], ids);
    }

    [Fact]
    public void Generate_Documents_HaveStableFieldsAndConsistentValues()
    {
        string[] fields = ["customer", "status", "createdAt", "paid", "tags", "lines", "lineCount", "itemCount", "total", "notes", "description"];
        var documents = DatasetGenerator.Generate(new DatasetSpec(DatasetShape.LogNormal, documentCount: 300, seed: 21)).ToList();

        foreach (var document in documents)
        {
            using var json = JsonDocument.Parse(document.Utf8Json);
            var root = json.RootElement;
            Assert.Equal(fields, root.EnumerateObject().Select(p => p.Name));
            Assert.Equal(["id", "name", "city", "tier"], root.GetProperty("customer").EnumerateObject().Select(p => p.Name));
            Assert.Contains(root.GetProperty("customer").GetProperty("tier").GetString(), new[] { "bronze", "silver", "gold", "platinum" });

            var lines = root.GetProperty("lines").EnumerateArray().ToList();
            Assert.NotEmpty(lines);
            Assert.Equal(lines.Count, root.GetProperty("lineCount").GetInt64());
            Assert.Equal(lines.Sum(l => l.GetProperty("quantity").GetInt64()), root.GetProperty("itemCount").GetInt64());
            var total = lines.Sum(l => l.GetProperty("quantity").GetInt64() * l.GetProperty("price").GetDouble());
            Assert.Equal(total, root.GetProperty("total").GetDouble(), 0.01);
            Assert.InRange(root.GetProperty("tags").GetArrayLength(), 1, 5);

            var status = root.GetProperty("status").GetString();
            Assert.Equal(status is not ("pending" or "cancelled"), root.GetProperty("paid").GetBoolean());
            Assert.True(DateTimeOffset.TryParse(root.GetProperty("createdAt").GetString(), out _));
            Assert.False(string.IsNullOrWhiteSpace(root.GetProperty("description").GetString()));
        }

        // Bigger documents carry more lines.
        var bySize = documents.OrderBy(d => d.SizeBytes).ToList();
        Assert.True(LineCount(bySize[^1]) > 10 * LineCount(bySize[0]));
    }

    [Fact]
    public void Generate_CreatedAt_RisesAlongKeyOrder()
    {
        var dates = DatasetGenerator.Generate(new DatasetSpec(DatasetShape.Uniform, documentCount: 200))
            .Select(d => JsonDocument.Parse(d.Utf8Json).RootElement.GetProperty("createdAt").GetDateTime())
            .ToList();

        Assert.True(dates.Take(20).Max() < dates.TakeLast(20).Min());
    }

    private static long LineCount(GeneratedDocument document) =>
        JsonDocument.Parse(document.Utf8Json).RootElement.GetProperty("lineCount").GetInt64();
}
