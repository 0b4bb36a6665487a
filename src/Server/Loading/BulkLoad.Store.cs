using System.Diagnostics.CodeAnalysis;
using System.IO.Pipelines;
using Indexing.Storage;

namespace Indexing.Server.Loading;

/// <summary>
/// Bulk loads into a <see cref="DocumentStore"/> opened outside the engine: the <c>measure</c> command's
/// scratch store (unsynced writes, its own size limit) and the tests of the line format. This file
/// reaches the storage layer's internals; <c>POST /docs/bulk</c> goes through the engine.
/// </summary>
internal static partial class BulkLoad
{
    /// <summary>Reads <paramref name="reader"/> to its end, storing every good line in <paramref name="store"/>.</summary>
    /// <param name="limitSetting">How the user raises the document size limit, named in the message for a line too long.</param>
    /// <param name="progress">Updated as lines are read, for a progress display on another thread; optional.</param>
    public static Task<BulkResult> LoadAsync(
        PipeReader reader, DocumentStore store, string limitSetting, BulkLoadProgress? progress, CancellationToken cancellationToken) =>
        LoadAsync(reader, new StoreTarget(store), limitSetting, progress, cancellationToken);

    private sealed class StoreTarget(DocumentStore store) : IBulkTarget
    {
        public long MaxDocumentBytes => store.Options.MaxDocumentBytes;

        public bool IsValid(string id, ReadOnlySpan<byte> body, [NotNullWhen(false)] out DocumentValidationError? error) =>
            DocumentIds.TryValidate(id, out error) && DocumentBodies.TryValidate(id, body, store.Options.MaxDocumentBytes, out error);

        public BulkWriteResult PutMany(IReadOnlyList<DocumentWrite> documents, CancellationToken cancellationToken) =>
            store.PutMany(documents, cancellationToken);
    }
}
