using System.Collections.Immutable;
using System.Runtime.InteropServices;

using Indexing.Storage;

namespace Indexing.Prefetcher;

// Cuts the key space lazily into read tasks balanced by bytes, not counts: with sizes from 2 KB to
// 20 MB, equal counts would make tasks differ by four orders of magnitude. A large document is a
// task of its own, so it never holds back small ones; the others fill a task up to its target,
// read when the task starts, as the controller changes it; the run's first ones ramp up to it
// (TaskRamp), each size spread over the readers (L, also read when the task is cut). The scan must
// be in key order.
internal static class ReadPlanner
{
    public static IEnumerable<ReadTask> Plan(
        IEnumerable<DocumentMetadata> keyOrdered, PlanOptions options, Func<long>? targetTaskBytes = null, Func<int>? readers = null)
    {
        ArgumentNullException.ThrowIfNull(keyOrdered);
        ArgumentNullException.ThrowIfNull(options);
        return PlanLazily(keyOrdered, options, targetTaskBytes, readers);
    }

    private static IEnumerable<ReadTask> PlanLazily(
        IEnumerable<DocumentMetadata> keyOrdered, PlanOptions options, Func<long>? targetTaskBytes, Func<int>? readers)
    {
        var pending = new PendingTask(Math.Min(options.MaxDocumentsPerTask, 1024));
        var ramp = new TaskRamp(options.FirstTaskBytes);
        var sequence = 0L;
        string? previousId = null;
        foreach (var document in keyOrdered)
        {
            Validate(document, previousId);
            previousId = document.Id;

            if (document.SizeBytes > options.LargeDocumentThresholdBytes)
            {
                if (pending.Count > 0)
                {
                    yield return pending.Cut(sequence++);
                }

                yield return new ReadTask(
                    sequence++, document.Id, document.Id, 1, document.SizeBytes, IsLargeDocument: true, TargetBytes: 0, [document.Id], [document.Etag]);
                continue;
            }

            if (pending.Count > 0
                && (pending.Count == options.MaxDocumentsPerTask || pending.Bytes + document.SizeBytes > pending.TargetBytes))
            {
                yield return pending.Cut(sequence++);
            }

            if (pending.Count == 0)
            {
                var target = options.ClampTarget(targetTaskBytes?.Invoke() ?? options.DefaultTaskBytes);
                // L is read (under the admission lock) only while the ramp lasts, not at every cut of the run.
                pending.TargetBytes = ramp.Active ? options.ClampTarget(ramp.Next(target, readers?.Invoke() ?? 1)) : target;
                pending.Ramp = pending.TargetBytes < target;
            }

            pending.Add(document);
        }

        if (pending.Count > 0)
        {
            yield return pending.Cut(sequence);
        }
    }

    private static void Validate(DocumentMetadata document, string? previousId)
    {
        if (document.Id is null)
        {
            throw new InvalidOperationException(
                $"The metadata scan returned a document without an id after {MessageText.Quote(previousId)}; every document needs its key.");
        }

        if (document.SizeBytes < 0)
        {
            throw new InvalidOperationException(
                $"The metadata scan returned size {document.SizeBytes} for {MessageText.Quote(document.Id)}; sizes must be zero or more.");
        }

        if (document.Etag < 1)
        {
            throw new InvalidOperationException(
                $"The metadata scan returned etag {document.Etag} for {MessageText.Quote(document.Id)}; etags start at 1.");
        }

        if (previousId is not null && DocumentIds.CompareKeyOrder(previousId, document.Id) >= 0)
        {
            throw new InvalidOperationException(
                $"The metadata scan is out of key order: {MessageText.Quote(document.Id)} follows {MessageText.Quote(previousId)}, but ids must be strictly increasing in UTF-8 byte order.");
        }
    }

    // The task being built; its buffers are reused, each cut copies them into exact-size arrays.
    private sealed class PendingTask(int capacity)
    {
        private readonly List<string> _ids = new(capacity);
        private readonly List<long> _etags = new(capacity);

        public int Count => _ids.Count;

        public long Bytes { get; private set; }

        public long TargetBytes { get; set; }

        public bool Ramp { get; set; }

        public void Add(DocumentMetadata document)
        {
            _ids.Add(document.Id);
            _etags.Add(document.Etag);
            Bytes += document.SizeBytes;
        }

        public ReadTask Cut(long sequence)
        {
            var ids = ImmutableArray.Create<string>(CollectionsMarshal.AsSpan(_ids));
            var etags = ImmutableArray.Create<long>(CollectionsMarshal.AsSpan(_etags));
            var task = new ReadTask(sequence, ids[0], ids[^1], ids.Length, Bytes, IsLargeDocument: false, TargetBytes, ids, etags, Ramp);
            _ids.Clear();
            _etags.Clear();
            Bytes = 0;
            return task;
        }
    }
}
