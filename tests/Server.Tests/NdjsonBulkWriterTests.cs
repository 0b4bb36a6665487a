using System.IO.Pipelines;
using System.Text;
using System.Text.Json;
using Indexing.Datasets;
using Indexing.Engine;
using Indexing.Server.Loading;
using Indexing.Storage;

namespace Indexing.Server.Tests;

// The bulk format's two halves live together in Loading/: what the writer writes, BulkLoad reads.
public sealed class NdjsonBulkWriterTests
{
    [Fact]
    public async Task WrittenLines_LoadedWithBulkLoad_EveryDocumentStoredByteForByte()
    {
        // Growing reaches past the writer's 64 KiB inline limit, so both of its write paths are read back.
        var documents = DatasetGenerator.Generate(new DatasetSpec(DatasetShape.Growing, documentCount: 80, seed: 3)).ToList();
        var output = new MemoryStream();
        using (var writer = new NdjsonBulkWriter(output, leaveOpen: true))
        {
            writer.WriteAll(documents);
        }

        output.Position = 0;
        using var directory = new TempDirectory("indexing-bulk-format-tests");
        await using var engine = IndexingEngine.Open(new EngineOptions { DataDirectory = directory.Path, Storage = new StoreOptions(syncWrites: false) });
        var result = await BulkLoad.LoadAsync(PipeReader.Create(output), engine, "Storage:MaxDocumentBytes", progress: null, CancellationToken.None);

        Assert.Empty(result.Errors);
        Assert.Equal(documents.Count, result.Stored);
        foreach (var document in documents)
        {
            Assert.Equal(document.Utf8Json, engine.Get(document.Id)?.Body);
        }
    }

    [Fact]
    public void Write_GeneratedDocuments_EachLineParsesBackToIdAndBody()
    {
        // Growing reaches past the 64 KiB inline limit, so both write paths are covered.
        var documents = DatasetGenerator.Generate(new DatasetSpec(DatasetShape.Growing, documentCount: 80, seed: 2)).ToList();
        Assert.Contains(documents, d => d.SizeBytes > 64 * 1024);
        using var output = new MemoryStream();

        using (var writer = new NdjsonBulkWriter(output, leaveOpen: true))
        {
            writer.WriteAll(documents);
            Assert.Equal(80, writer.DocumentsWritten);
            Assert.Equal(output.Length, writer.BytesWritten);
        }

        var lines = Encoding.UTF8.GetString(output.ToArray()).Split('\n');
        Assert.Equal(81, lines.Length);
        Assert.Equal("", lines[^1]);
        for (var i = 0; i < documents.Count; i++)
        {
            using var line = JsonDocument.Parse(lines[i]);
            Assert.Equal(["id", "doc"], line.RootElement.EnumerateObject().Select(p => p.Name));
            Assert.Equal(documents[i].Id, line.RootElement.GetProperty("id").GetString());
            Assert.Equal(Encoding.UTF8.GetString(documents[i].Utf8Json), line.RootElement.GetProperty("doc").GetRawText());
        }
    }

    [Fact]
    public async Task WriteAsync_SameDocuments_SameBytesAsWrite()
    {
        var documents = DatasetGenerator.Generate(new DatasetSpec(DatasetShape.RareGiants, documentCount: 200, seed: 6)).ToList();
        using var sync = new MemoryStream();
        using var async = new MemoryStream();

        using (var writer = new NdjsonBulkWriter(sync, leaveOpen: true))
        {
            writer.WriteAll(documents);
        }

        await using (var writer = new NdjsonBulkWriter(async, leaveOpen: true))
        {
            foreach (var document in documents)
            {
                await writer.WriteAsync(document);
            }
        }

        Assert.True(sync.ToArray().AsSpan().SequenceEqual(async.ToArray()));
    }

    [Fact]
    public void Write_IdNeedingEscapes_ParsesBack()
    {
        using var output = new MemoryStream();
        using (var writer = new NdjsonBulkWriter(output, leaveOpen: true))
        {
            writer.Write("notes/\"quoted\" \\ é", "{\"a\":1}"u8);
        }

        using var line = JsonDocument.Parse(output.ToArray());
        Assert.Equal("notes/\"quoted\" \\ é", line.RootElement.GetProperty("id").GetString());
    }

    [Theory]
    [InlineData("{\n\"a\": 1\n}")]
    [InlineData("{\"a\":1}\r")]
    public void Write_BodyWithLineBreak_RefusedWithAdvice(string body)
    {
        using var writer = new NdjsonBulkWriter(new MemoryStream());

        var error = Assert.Throws<ArgumentException>(() => writer.Write("orders/1", Encoding.UTF8.GetBytes(body)));

        Assert.Contains("'orders/1'", error.Message, StringComparison.Ordinal);
        Assert.Contains("compact JSON", error.Message, StringComparison.Ordinal);
        Assert.Equal(0, writer.DocumentsWritten);
    }

    [Fact]
    public void Write_EmptyBody_Refused()
    {
        using var writer = new NdjsonBulkWriter(new MemoryStream());

        Assert.Throws<ArgumentException>(() => writer.Write("orders/1", []));
    }

    [Fact]
    public void Dispose_NotLeftOpen_ClosesStreamAndRefusesWrites()
    {
        var output = new MemoryStream();
        var writer = new NdjsonBulkWriter(output);

        writer.Dispose();
        writer.Dispose();

        Assert.False(output.CanWrite);
        Assert.Throws<ObjectDisposedException>(() => writer.Write("orders/1", "{}"u8));
    }

    [Fact]
    public void Constructor_ReadOnlyStream_Refused()
    {
        using var readOnly = new MemoryStream([], writable: false);

        Assert.Throws<ArgumentException>(() => new NdjsonBulkWriter(readOnly));
    }
}
