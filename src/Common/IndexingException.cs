namespace Indexing;

/// <summary>
/// The one root of what the engine cannot do, as opposed to a caller's mistake (an argument exception).
/// <see cref="Kind"/> says what happened, so a host answers every case with one switch (a 404 for an
/// unknown index, a 507 for a full volume). The families under it say where: the store
/// (<c>DocumentStoreException</c>), a document breaking a rule (<c>DocumentValidationException</c>) and
/// the indexes (<c>IndexException</c>; <c>IndexDefinitionException</c> and <c>QuerySyntaxException</c>
/// carry the details a host shows). A rebuild's failed read is an <see cref="IndexingException"/> too,
/// but reaches a host only as the rebuild's error text.
/// </summary>
public abstract class IndexingException : Exception
{
    private protected IndexingException(IndexingErrorKind kind, string message, Exception? innerException = null)
        : base(message, innerException)
    {
        Kind = kind;
    }

    /// <summary>What happened: a failure, a refused request (and which), or a conflict.</summary>
    public IndexingErrorKind Kind { get; }
}

/// <summary>What an <see cref="IndexingException"/> is about, for a host to answer each case in one place.</summary>
public enum IndexingErrorKind
{
    /// <summary>The store or an index failed (an I/O error, corruption, a failed engine call); the original exception is inside.</summary>
    Failure = 0,

    /// <summary>The store's volume is full: every write is refused, reads go on, and writes resume by themselves once space returns.</summary>
    StoreFull = 1,

    /// <summary>A document id or body breaks a rule; nothing was written.</summary>
    InvalidDocument = 2,

    /// <summary>An index definition breaks a rule; every problem is listed.</summary>
    InvalidDefinition = 3,

    /// <summary>A query is not valid for its index: its syntax, a field, a value or a sort.</summary>
    InvalidQuery = 4,

    /// <summary>A prefix, wildcard or pattern term matches more index terms than a query may expand to; the query was not run.</summary>
    QueryTooBroad = 5,

    /// <summary>A query ran past its time limit and was stopped; nothing changed.</summary>
    QueryTimeout = 6,

    /// <summary>No index has the given name.</summary>
    IndexNotFound = 7,

    /// <summary>The index cannot answer: its serving generation could not be opened. A rebuild replaces it.</summary>
    IndexUnavailable = 8,

    /// <summary>A rebuild cannot start now: one is running, the index is being deleted, or it has no readable definition.</summary>
    RebuildConflict = 9,

    /// <summary>A verify of the index is already running; one runs at a time per index.</summary>
    VerifyConflict = 10,
}
