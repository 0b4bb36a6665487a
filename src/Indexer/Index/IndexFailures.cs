namespace Indexing.Indexer;

/// <summary>
/// A <see cref="DocumentIndex"/>'s failure accounting: the last error and the failures of the index
/// itself in a row (which decide when it stops writing), rollbacks, documents refused one by one,
/// and values that did not match their field's type.
/// </summary>
/// <remarks>
/// Threading: any thread records (build workers, the follow loop, the refresh loop); counters are
/// Interlocked and messages written with Volatile, so a status reading never waits. What a failure
/// does to the index's state is the index's business (<c>DocumentIndex.Status.cs</c>).
/// </remarks>
internal sealed class IndexFailures
{
    private string? _lastError;
    private IndexWriteException? _lastRecorded;
    private int _consecutive;
    private long _rollbacks;
    private long _failedDocuments;
    private string? _lastDocumentFailure;
    private long _mismatchedValues;
    private string? _lastMismatch;

    /// <summary>The latest failure of the index itself, with what became of it.</summary>
    public string? LastError
    {
        get => Volatile.Read(ref _lastError);
        set => Volatile.Write(ref _lastError, value);
    }

    /// <summary>Failures of the index itself since its last success.</summary>
    public int Consecutive => Volatile.Read(ref _consecutive);

    /// <summary>Rollbacks to the last commit.</summary>
    public long Rollbacks => Interlocked.Read(ref _rollbacks);

    /// <summary>Documents refused (invalid JSON, refused by the engine).</summary>
    public long FailedDocuments => Interlocked.Read(ref _failedDocuments);

    /// <summary>Why the latest refused document was refused.</summary>
    public string? LastDocumentFailure => Volatile.Read(ref _lastDocumentFailure);

    /// <summary>Values that did not match their field's type (the document was indexed without them).</summary>
    public long MismatchedValues => Interlocked.Read(ref _mismatchedValues);

    /// <summary>The latest such value.</summary>
    public string? LastMismatch => Volatile.Read(ref _lastMismatch);

    /// <summary>
    /// Counts a failure of the index itself and makes it the last error; returns the failures in a
    /// row now, or null when this same exception was recorded already (where it happened, and now
    /// seen again by an outer loop): it counts once.
    /// </summary>
    public int? Record(IndexWriteException failure)
    {
        if (ReferenceEquals(Interlocked.Exchange(ref _lastRecorded, failure), failure))
        {
            return null;
        }

        LastError = failure.Message;
        return Interlocked.Increment(ref _consecutive);
    }

    /// <summary>The index did its work: the failures in a row start over.</summary>
    public void Succeeded() => Volatile.Write(ref _consecutive, 0);

    /// <summary>Counts a rollback to the last commit.</summary>
    public void RolledBack() => Interlocked.Increment(ref _rollbacks);

    /// <summary>Counts a document refused on its own (the index goes on).</summary>
    public void DocumentFailed(IndexWriteException failure)
    {
        Interlocked.Increment(ref _failedDocuments);
        Volatile.Write(ref _lastDocumentFailure, failure.Message);
    }

    /// <summary>Counts the values of document <paramref name="id"/> that did not match their field's type.</summary>
    public void Mismatched(string id, ExtractedFields fields)
    {
        Interlocked.Add(ref _mismatchedValues, fields.MismatchCount);
        if (fields.Mismatches.Count > 0)
        {
            Volatile.Write(ref _lastMismatch, $"document {MessageText.Quote(id)}: {fields.Mismatches[^1]}");
        }
    }
}
