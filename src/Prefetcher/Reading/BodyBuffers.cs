using System.Buffers;
using System.Runtime.InteropServices;

namespace Indexing.Prefetcher;

/// <summary>
/// The arrays one run's reads copy bodies into. A batch lends them to the consumer, and
/// <see cref="PrefetchBatch.ReleaseBodies"/> gives them back once it is done with the documents, to
/// be read into again.
/// </summary>
/// <remarks>
/// Bodies of <see cref="MinPooledBytes"/> to <see cref="MaxPooledBytes"/> come from a pool of the
/// run's own (<see cref="ArrayPool{T}.Create(int, int)"/>: arrays rounded up to a power of two, a
/// bucket per size). Smaller ones are new arrays, which the collector clears in bulk at little cost;
/// larger ones too, as a giant is rare and a parked 20 MiB array is memory nobody counts.
/// <para>
/// Why: a new array per body is fresh memory the kernel faults in on the copy, and a body waits in
/// the budget long enough to survive a gen0 collection and be promoted. A reused array is neither.
/// </para>
/// <para>
/// Memory: the pool keeps at most the arrays out at once, which is what the budget held (up to twice
/// its bytes, for the rounding) plus the batches taken and not yet released. It goes with the run.
/// A batch never released loses only the reuse: its arrays are left to the collector.
/// </para>
/// </remarks>
internal sealed class BodyBuffers
{
    /// <summary>Bodies shorter than this are new arrays.</summary>
    public const int MinPooledBytes = 16 * 1024;

    /// <summary>Bodies longer than this are new arrays.</summary>
    public const int MaxPooledBytes = 1024 * 1024;

    // Arrays of one bucket out at once are at most the budget over the bucket's smallest body; the
    // smallest pooled bucket's is MinPooledBytes. Each bucket is a slot array of this length (8 bytes
    // a slot, 17 buckets: 2.2 MiB at the default budget).
    private const int MaxArraysPerBucket = 16_384;

    private readonly ArrayPool<byte> _pool;

    public BodyBuffers(long budgetBytes)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(budgetBytes);
        _pool = ArrayPool<byte>.Create(MaxPooledBytes, (int)Math.Clamp(budgetBytes / MinPooledBytes, 16, MaxArraysPerBucket));
    }

    /// <summary>An array of at least <paramref name="length"/> bytes to copy a body into; its content is undefined.</summary>
    public byte[] Rent(int length) =>
        IsPooled(length) ? _pool.Rent(length) : GC.AllocateUninitializedArray<byte>(length);

    /// <summary>Gives back the array under a body <see cref="Rent"/> gave; nothing may read the body after.</summary>
    public void Return(ReadOnlyMemory<byte> body)
    {
        if (IsPooled(body.Length) && MemoryMarshal.TryGetArray(body, out var segment))
        {
            _pool.Return(segment.Array!);
        }
    }

    private static bool IsPooled(int length) => length is >= MinPooledBytes and <= MaxPooledBytes;
}
