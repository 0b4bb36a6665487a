namespace Indexing;

/// <summary>
/// The one root of what the engine cannot do, as opposed to a caller's mistake (an argument exception):
/// the store's family (<c>DocumentStoreException</c>, a full volume among them), a document breaking a rule
/// (<c>DocumentValidationException</c>), a rebuild's read failing (<c>PrefetchReadException</c>), and the
/// indexes' family (<c>IndexException</c>: unknown index, bad definition or query, a conflicting rebuild,
/// a failed write). A host catches this one type at its boundary and the families where it answers
/// differently (a 404 for an unknown index, a 507 for a full disk).
/// </summary>
public abstract class IndexingException : Exception
{
    protected IndexingException(string message)
        : base(message)
    {
    }

    protected IndexingException(string message, Exception? innerException)
        : base(message, innerException)
    {
    }
}
