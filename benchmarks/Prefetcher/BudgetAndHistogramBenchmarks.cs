using BenchmarkDotNet.Attributes;
using Indexing.Prefetcher;

namespace Indexing.Benchmarks;

// The per-document hot path of the prefetcher's bookkeeping: what every read pays to the byte
// budget (reserve, complete, release) and to the size histogram. Each benchmark runs over one
// MultiGet's worth of documents and reports the cost per document. Not sealed: BenchmarkDotNet
// derives from benchmark classes.
[MemoryDiagnoser]
public class BudgetAndHistogramBenchmarks
{
    private const int Documents = 4096;

    private long[] _sizes = [];
    private string[] _ids = [];
    private ByteBudget _budget = null!;
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

        _budget = new ByteBudget(256L * 1024 * 1024);
        _histogram = new DocumentSizeHistogram();
    }

    [GlobalCleanup]
    public void Cleanup() => _budget.Dispose();

    [Benchmark(OperationsPerInvoke = Documents)]
    public void Budget_TryReserveCompleteRelease()
    {
        foreach (var size in _sizes)
        {
            if (!_budget.TryReserve(size))
            {
                throw new InvalidOperationException($"A {size}-byte reservation did not fit an empty budget.");
            }

            _budget.CompleteRead(size, size);
            _budget.Release(size);
        }
    }

    // The path the reader will use: ReserveAsync completing synchronously when the bytes fit.
    [Benchmark(OperationsPerInvoke = Documents)]
    public async Task Budget_ReserveAsyncFastPathCompleteRelease()
    {
        foreach (var size in _sizes)
        {
            await _budget.ReserveAsync(size, CancellationToken.None);
            _budget.CompleteRead(size, size);
            _budget.Release(size);
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
    public void Histogram_RecordBatch() => _histogram.RecordBatch(_sizes, _ids);
}
