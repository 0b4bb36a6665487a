namespace Indexing.Indexer.Tests.Index;

/// <summary>A file operation a fault can hit.</summary>
internal enum FileOperation
{
    /// <summary>A file is created (Lucene's CreateOutput).</summary>
    Create,

    /// <summary>One write call into a file.</summary>
    Write,

    /// <summary>An fsync: Lucene's Sync of files, or the catalog's temp file flush or directory fsync.</summary>
    Sync,

    /// <summary>The catalog's rename of its temp file over catalog.json.</summary>
    Rename,

    /// <summary>A file is deleted (Lucene's DeleteFile).</summary>
    Delete,
}

/// <summary>
/// Counts the file operations that every <see cref="FaultyDirectory"/> and the catalog (through
/// <c>IndexManagerOptions.CatalogStep</c>) sharing it see, and fails chosen ones with an
/// <see cref="IOException"/> as a full disk would: by number (the Nth operation from the plan's
/// start), or the next operation that matches a predicate. Thread-safe.
/// </summary>
internal sealed class FaultPlan
{
    private readonly Lock _lock = new();
    private readonly HashSet<long> _failAt = [];
    private Func<FileOperation, string, bool>? _match;
    private Action? _onFault;
    private long _operations;
    private int _failures;

    /// <summary>Operations seen so far (failed ones included).</summary>
    public long Operations => Interlocked.Read(ref _operations);

    /// <summary>Faults that fired so far.</summary>
    public int Failures => Volatile.Read(ref _failures);

    private readonly Dictionary<FileOperation, long> _byKind = [];
    private readonly List<(long Number, FileOperation Operation, string File)> _nonWrites = [];

    /// <summary>The operations numbered <paramref name="numbers"/> (1-based, counted from the plan's start) throw.</summary>
    public void FailAt(params long[] numbers)
    {
        lock (_lock)
        {
            _failAt.UnionWith(numbers);
        }
    }

    /// <summary>The next operation for which <paramref name="match"/> (operation, file name) holds throws, once; <paramref name="onFault"/> runs first on the failing thread.</summary>
    public void FailNext(Func<FileOperation, string, bool> match, Action? onFault = null)
    {
        lock (_lock)
        {
            _match = match;
            _onFault = onFault;
        }
    }

    /// <summary>
    /// The operations counted so far: how many, how many of each kind, and every one but writes by
    /// number (the sweep fails each of these; writes, far more numerous, are sampled).
    /// </summary>
    public Counts Count()
    {
        lock (_lock)
        {
            return new Counts(_operations, new Dictionary<FileOperation, long>(_byKind), [.. _nonWrites]);
        }
    }

    /// <summary>Disarms every fault not yet fired.</summary>
    public void Clear()
    {
        lock (_lock)
        {
            _failAt.Clear();
            _match = null;
            _onFault = null;
        }
    }

    /// <summary>Counts one operation and throws if it is to fail.</summary>
    public void Before(FileOperation operation, string file)
    {
        Action? onFault = null;
        bool fails;
        lock (_lock)
        {
            var number = ++_operations;
            _byKind[operation] = _byKind.GetValueOrDefault(operation) + 1;
            if (operation != FileOperation.Write)
            {
                _nonWrites.Add((number, operation, file));
            }
            fails = _failAt.Remove(number);
            if (!fails && _match is { } match && match(operation, file))
            {
                fails = true;
                onFault = _onFault;
                _match = null;
                _onFault = null;
            }
        }

        if (!fails)
        {
            return;
        }

        onFault?.Invoke();
        Interlocked.Increment(ref _failures);
        throw new IOException($"injected {operation.ToString().ToLowerInvariant()} failure on {file}: no space left on device");
    }

    /// <summary>What <see cref="Count"/> returns.</summary>
    public sealed record Counts(long Operations, IReadOnlyDictionary<FileOperation, long> ByKind, IReadOnlyList<(long Number, FileOperation Operation, string File)> NonWrites);
}
