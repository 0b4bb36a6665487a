using BenchmarkDotNet.Attributes;
using Indexing.Prefetcher;

namespace Indexing.Benchmarks;

// The per-document hot path of the prefetcher's bookkeeping: what every read pays to the
// admission (admit, read ended, release) and to the size histogram. Each benchmark runs over one
// MultiGet's worth of documents and reports the cost per document. Not sealed: BenchmarkDotNet
// derives from benchmark classes.
[MemoryDiagnoser]
public class BudgetAndHistogramBenchmarks
{
    private const int Documents = 4096;

    private long[] _sizes = [];
    private string[] _ids = [];
    private PrefetchedDocument[] _documents = [];
    private ReadAdmission _admission = null!;
    private DocumentSizeHistogram _histogram = null!;

    [GlobalSetup]
    public void Setup()
    {
        // Sizes spread over 512 B .. 2 MB so the histogram touches many buckets.
        var random = new Random(42);
        _sizes = new long[Documents];
        _ids = new string[Documents];
        for (var i = 0; i < Documents; i++)
        {
            _sizes[i] = (512L << random.Next(0, 12)) + random.Next(512);
            _ids[i] = $"doc/{i:D8}";
        }

        var body = new byte[_sizes.Max()];
        _documents = [.. _sizes.Select((size, i) => new PrefetchedDocument(_ids[i], 1, body.AsMemory(0, (int)size)))];
        _admission = new ReadAdmission(new PrefetchLimits { BudgetBytes = 256L * 1024 * 1024 }, concurrency: 1);
        _histogram = new DocumentSizeHistogram();
    }

    // What the planner and a reader pay per read that fits at once: no wait, no allocation.
    [Benchmark(OperationsPerInvoke = Documents)]
    public void Admission_AdmitReadEndedRelease()
    {
        foreach (var size in _sizes)
        {
            _admission.Admit(size, CancellationToken.None);
            _admission.ReadEnded(size, size);
            _admission.Release(size);
        }
    }

    [Benchmark(OperationsPerInvoke = Documents)]
    public void Histogram_Record()
    {
        for (var i = 0; i < _sizes.Length; i++)
        {
            _histogram.Record(_sizes[i], _ids[i]);
        }
    }

    [Benchmark(OperationsPerInvoke = Documents)]
    public void Histogram_RecordBatch() => _histogram.RecordBatch(_documents);
}
