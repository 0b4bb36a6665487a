using System.Diagnostics;

using Indexing.Storage;

namespace Indexing.Indexer;

// One document through extraction and the sink, on one indexing thread, with the failure rules:
// - a body that is not a JSON object, or a document the engine refuses: the document is left out
//   (any older copy removed), counted and reported in the status; indexing goes on;
// - values of the wrong type: the document is indexed without them; they are counted;
// - anything else from the engine is a failure of the index itself, wrapped once here naming the
//   index and the document, and thrown to the loop, which decides (retry, then Error).
internal sealed partial class DocumentIndex
{
    // Per-thread state: the sink writer (the engine reuses its fields per thread) and the extraction
    // buffer. AddOnly: a build into a fresh or cleared index, where no id is there yet, so documents
    // are added without a delete term; everything else (following, a resumed build) replaces by id.
    private sealed class WriteContext(IIndexSinkWriter writer, ExtractedFields buffer, bool addOnly)
    {
        public IIndexSinkWriter Writer { get; } = writer;

        public ExtractedFields Buffer { get; } = buffer;

        public bool AddOnly { get; } = addOnly;
    }

    private WriteContext CreateWriteContext(bool addOnly = false) => new(_sink.CreateWriter(), _extractor.CreateBuffer(streamLargeText: true), addOnly);

    private bool InCollection(string id) => DocumentIds.GetCollection(id).SequenceEqual(Definition.Collection);

    // Returns whether the document is in the index now.
    private bool WriteDocument(WriteContext context, string id, long etag, ReadOnlySpan<byte> body)
    {
        try
        {
            _extractor.Extract(body, context.Buffer);
        }
        catch (InvalidDataException exception)
        {
            RecordDocumentFailure(new IndexWriteException(Name, id, exception.Message, exception));
            if (!context.AddOnly)
            {
                DeleteDocument(context, id, countDelete: false);
            }

            return false;
        }

        if (context.Buffer.MismatchCount > 0)
        {
            RecordMismatches(id, context.Buffer);
        }

        var start = Stopwatch.GetTimestamp();
        try
        {
            if (context.AddOnly)
            {
                context.Writer.Add(id, etag, context.Buffer);
            }
            else
            {
                context.Writer.Upsert(id, etag, context.Buffer);
            }
        }
        catch (ArgumentException exception)
        {
            RecordDocumentFailure(new IndexWriteException(Name, id, $"the search engine refused it: {exception.Message}", exception));
            return false;
        }
        catch (Exception exception) when (IndexException.IsFailureToWrap(exception))
        {
            NoteEngineFailed();
            throw new IndexWriteException(Name, id, $"writing it failed: {exception.Message}", exception);
        }
        finally
        {
            _meter.InEngine(Stopwatch.GetTimestamp() - start);
        }

        _meter.Indexed(body.Length);
        _checkpoints.AddUncommitted(body.Length);
        return true;
    }

    private void DeleteDocument(WriteContext context, string id, bool countDelete)
    {
        var start = Stopwatch.GetTimestamp();
        try
        {
            context.Writer.Delete(id);
        }
        catch (Exception exception) when (IndexException.IsFailureToWrap(exception))
        {
            NoteEngineFailed();
            throw new IndexWriteException(Name, id, $"deleting it failed: {exception.Message}", exception);
        }
        finally
        {
            _meter.InEngine(Stopwatch.GetTimestamp() - start);
        }

        if (countDelete)
        {
            _meter.Deleted();
        }
    }
}
