using System.Text;
using Indexing.Datasets;
using Indexing.Prefetcher;
using Indexing.Storage;

namespace Indexing.Measurement.Tests;

/// <summary>
/// The chunked in-memory source of the IndexOnly bound over a real RocksDB store: every document
/// of the collection once, in key order, with the etags of one snapshot; chunks cut at the limit
/// with a larger document alone, each loaded only when the previous one is used up, so at most
/// max(limit, largest document) is held; its snapshot released at the end and on early disposal.
/// </summary>
public sealed class ChunkedMemoryBatchSourceTests
{
    private const long OneMiB = 1 << 20;

    [Fact]
    public async Task OverTheLimit_HandsOverTheSnapshotInKeyOrderOnceHoldingAtMostOneChunk()
    {
        using var environment = new MeasurementEnvironment(DatasetShape.RareGiants, 4_000_000);
        List<DocumentMetadata> expected;
        using (var snapshot = environment.Store.CreateSnapshot())
        {
            expected = [.. snapshot.ScanMetadata(MeasurementEnvironment.Orders.Collection)];
        }

        var largest = expected.Max(d => d.SizeBytes);
        Assert.True(largest > OneMiB, $"the largest document is {largest} bytes: the case of a document larger than a chunk is not exercised");

        var taken = new List<PrefetchedDocument>();
        var chunksAfterFirstTake = 0;
        await using (var source = new ChunkedMemoryBatchSource(environment.Store, MeasurementEnvironment.Orders.Collection, OneMiB))
        {
            // Small takes, so that every chunk is handed out in several batches.
            while (await source.TakeAsync(64, 256 << 10) is { } batch)
            {
                if (taken.Count == 0)
                {
                    chunksAfterFirstTake = source.ChunksLoaded;
                }

                taken.AddRange(batch.Documents);
                Assert.Equal(batch.Documents[^1].Id, batch.HandedOutThrough);
                Assert.Equal(batch.Documents.Sum(d => d.SizeBytes), batch.TotalBytes);
            }

            Assert.Equal(environment.Written.LastEtag, source.SnapshotEtag);
            Assert.True(source.ChunksLoaded > 1, $"{source.ChunksLoaded} chunks");
            Assert.InRange(source.PeakHeldBytes, 1, Math.Max(OneMiB, largest));
            // The largest document is over the limit, so it was held alone: the peak is exactly it.
            Assert.Equal(largest, source.PeakHeldBytes);
            Assert.True(source.LoadingTime > TimeSpan.Zero, $"loading {source.LoadingTime}");
            Assert.Null(await source.TakeAsync(64, 256 << 10));
        }

        Assert.Equal(1, chunksAfterFirstTake);
        Assert.Equal(expected.Select(d => (d.Id, d.Etag, d.SizeBytes)), taken.Select(d => (d.Id, d.Etag, d.SizeBytes)));
        environment.AssertNoOpenHandles();
    }

    [Fact]
    public async Task LaidOutSizes_CutsChunksAtTheLimitWithEachLargerDocumentAlone()
    {
        const int KiB = 1 << 10;
        const long limit = 64 * KiB;
        // Sizes in key order, in KiB: larger-than-limit documents in the middle, back to back and
        // last, a run that fits exactly, and documents of other collections on both sides.
        int[] sizes = [10, 10, 10, 10, 10, 10, 10, 100, 5, 200, 150, 30, 30, 4, 64, 1, 100];
        int[] expectedChunkLengths = [6, 1, 1, 1, 1, 1, 3, 1, 1, 1];
        var writes = new List<DocumentWrite> { Padded("customers/1", 300 * KiB) };
        writes.AddRange(sizes.Select((size, i) => Padded($"orders/{i:D4}", size * KiB)));
        writes.Add(Padded("zeta/1", 300 * KiB));
        using var environment = new MeasurementEnvironment(writes);

        var chunkOf = new List<int>();
        await using (var source = new ChunkedMemoryBatchSource(environment.Store, MeasurementEnvironment.Orders.Collection, limit))
        {
            while (await source.TakeAsync(1, long.MaxValue) is { } batch)
            {
                var document = Assert.Single(batch.Documents);
                Assert.Equal($"orders/{chunkOf.Count:D4}", document.Id);
                Assert.Equal(sizes[chunkOf.Count] * KiB, document.SizeBytes);
                chunkOf.Add(source.ChunksLoaded);
            }

            Assert.Equal(200 * KiB, source.PeakHeldBytes);
        }

        // Each take found its document in the chunk loaded last, and a new chunk only came when the previous one was used up.
        Assert.Equal(expectedChunkLengths, chunkOf.GroupBy(c => c).Select(g => g.Count()));
        Assert.Equal(Enumerable.Range(1, expectedChunkLengths.Length), chunkOf.Distinct());
        environment.AssertNoOpenHandles();
    }

    [Fact]
    public async Task LimitBelowEveryDocument_HoldsOneDocumentPerChunk()
    {
        using var environment = new MeasurementEnvironment(DatasetShape.Uniform, 200_000);
        var taken = 0L;
        await using (var source = new ChunkedMemoryBatchSource(environment.Store, MeasurementEnvironment.Orders.Collection, 1))
        {
            while (await source.TakeAsync(1_000, 64 << 20) is { } batch)
            {
                // A chunk is one document, so no take can hand out more than one.
                Assert.Single(batch.Documents);
                taken++;
            }

            Assert.Equal(environment.Written.Documents, source.ChunksLoaded);
        }

        Assert.Equal(environment.Written.Documents, taken);
        environment.AssertNoOpenHandles();
    }

    [Fact]
    public async Task TotalsGiven_PressureReportsThemFromTheStart()
    {
        using var environment = new MeasurementEnvironment(DatasetShape.LogNormal, 500_000);
        var total = (environment.Written.Documents, environment.Written.Bytes);
        await using var given = new ChunkedMemoryBatchSource(environment.Store, MeasurementEnvironment.Orders.Collection, 64 << 10, total);
        await using var unknown = new ChunkedMemoryBatchSource(environment.Store, MeasurementEnvironment.Orders.Collection, 64 << 10);

        Assert.Equal(environment.Written.Documents, given.Pressure.DocumentsTotal);
        Assert.Equal(environment.Written.Bytes, given.Pressure.BytesKnown);
        Assert.Null(unknown.Pressure.BytesTotal);
        Assert.Equal(0, unknown.Pressure.BytesKnown);
    }

    [Fact]
    public async Task DisposedBeforeTheEnd_ReleasesItsSnapshotAndRefusesTakes()
    {
        using var environment = new MeasurementEnvironment(DatasetShape.LogNormal, 500_000);
        var source = new ChunkedMemoryBatchSource(environment.Store, MeasurementEnvironment.Orders.Collection, 64 << 10);
        Assert.NotNull(await source.TakeAsync(1, 64 << 10));
        Assert.Equal(1, environment.Store.GetStatus().OpenSnapshots);

        await source.DisposeAsync();

        environment.AssertNoOpenHandles();
        await Assert.ThrowsAsync<ObjectDisposedException>(async () => await source.TakeAsync(1, 64 << 10));
    }

    [Fact]
    public async Task Loads_CountTheProcessorTimeTheyUse()
    {
        // Each chunk's load keeps a core busy for 20 ms (the hook runs inside the load), so the
        // loads' processor time is at least that per chunk, and no more than the cores give over their wall time.
        var busyPerLoad = TimeSpan.FromMilliseconds(20);
        using var environment = new MeasurementEnvironment(DatasetShape.Uniform, 200_000);
        await using var source = new ChunkedMemoryBatchSource(environment.Store, MeasurementEnvironment.Orders.Collection, 64 << 10)
        {
            BeforeRangeRead = (_, _) =>
            {
                var until = Environment.CpuUsage.TotalTime + busyPerLoad;
                while (Environment.CpuUsage.TotalTime < until)
                {
                }
            },
        };

        while (await source.TakeAsync(16, 64 << 10) is not null)
        {
        }

        Assert.True(source.ChunksLoaded > 1, $"{source.ChunksLoaded} chunks");
        Assert.InRange(source.LoadingProcessorTime, busyPerLoad * source.ChunksLoaded, (source.LoadingTime * Environment.ProcessorCount) + RebuildWorkloadTests.ProcessorTimeSlack);
    }

    [Fact]
    public async Task LastChunksReadFails_TheRetriedTakeLoadsItAgainRatherThanEnding()
    {
        using var environment = new MeasurementEnvironment(DatasetShape.Uniform, 200_000);
        List<string> expected;
        using (var snapshot = environment.Store.CreateSnapshot())
        {
            expected = [.. snapshot.ScanMetadata(MeasurementEnvironment.Orders.Collection).Select(d => d.Id)];
        }

        var lastId = expected[^1];
        var lastChunkReads = 0;
        var taken = new List<string>();
        await using (var source = new ChunkedMemoryBatchSource(environment.Store, MeasurementEnvironment.Orders.Collection, 64 << 10)
        {
            // The first read of the last chunk fails; a retry reads it.
            BeforeRangeRead = (_, last) =>
            {
                if (last == lastId && lastChunkReads++ == 0)
                {
                    throw new IOException("injected failure of the last chunk's read");
                }
            },
        })
        {
            while (true)
            {
                PrefetchBatch? batch;
                try
                {
                    batch = await source.TakeAsync(16, 64 << 10);
                }
                catch (IOException) when (lastChunkReads == 1)
                {
                    continue;
                }

                if (batch is null)
                {
                    break;
                }

                taken.AddRange(batch.Documents.Select(d => d.Id));
            }

            Assert.True(source.ChunksLoaded > 1, $"{source.ChunksLoaded} chunks: the failure was not on a chunk after the first");
            Assert.Null(await source.TakeAsync(16, 64 << 10));
        }

        // The last chunk was read twice: the failed read, then the retried take's, which handed it over.
        Assert.Equal(2, lastChunkReads);
        Assert.Equal(expected, taken);
        environment.AssertNoOpenHandles();
    }

    // A JSON object of exactly sizeBytes UTF-8 bytes.
    private static DocumentWrite Padded(string id, int sizeBytes)
    {
        const string Empty = "{\"pad\":\"\"}";
        return new DocumentWrite(id, Encoding.UTF8.GetBytes($"{{\"pad\":\"{new string('x', sizeBytes - Empty.Length)}\"}}"));
    }
}
