namespace Indexing.Datasets;

// Mean size per tenth of the key order, from a stream whose length is not known in advance.
//
// Keeps at most MaxChunks running chunk sums of ChunkSize consecutive sizes each (plus one
// partial chunk). When the chunks are full, neighbours merge pairwise and ChunkSize doubles, so
// memory is fixed and a chunk always covers at most 2 / MaxChunks of the stream. Deciles are then
// cut at fractional positions: a chunk (or, when ChunkSize is 1, a single size) straddling a
// boundary contributes to each side in proportion to how many of its items fall there, as if its
// bytes were spread evenly over them. With up to MaxChunks sizes (ChunkSize 1) that is exact: a
// count divisible by 10 gives plain per-decile means, and otherwise a size on a boundary is shared
// by the two deciles it straddles. Past that, at most one chunk's worth of items at each boundary
// is averaged: under 2% of a decile's items for MaxChunks = 1024.
internal sealed class KeyOrderMeans
{
    public const int Buckets = 10;
    public const int MaxChunks = 1024;

    private readonly long[] _chunkSums = new long[MaxChunks];
    private long _chunkSize = 1;
    private int _fullChunks;
    private long _partialSum;
    private long _partialCount;

    public long Count { get; private set; }

    public void Add(long value)
    {
        Count++;
        _partialSum += value;
        if (++_partialCount < _chunkSize)
        {
            return;
        }

        _chunkSums[_fullChunks++] = _partialSum;
        _partialSum = 0;
        _partialCount = 0;
        if (_fullChunks == MaxChunks)
        {
            for (var i = 0; i < MaxChunks / 2; i++)
            {
                _chunkSums[i] = _chunkSums[2 * i] + _chunkSums[(2 * i) + 1];
            }

            _fullChunks = MaxChunks / 2;
            _chunkSize *= 2;
        }
    }

    // Mean of each tenth of the key order; all zero before anything was added.
    public double[] Means()
    {
        var means = new double[Buckets];
        if (Count == 0)
        {
            return means;
        }

        // Positions are counted in tenths of an item, so every cut falls on an integer and the
        // shares are exact integers; the full chunks and the partial one are kept apart because
        // their item counts differ, leaving one division each at the end.
        var full = new Int128[Buckets];
        var partial = new Int128[Buckets];
        for (var chunk = 0; chunk < _fullChunks; chunk++)
        {
            Spread(chunk * _chunkSize * Buckets, _chunkSize * Buckets, _chunkSums[chunk], full);
        }

        Spread(_fullChunks * _chunkSize * Buckets, _partialCount * Buckets, _partialSum, partial);
        for (var i = 0; i < Buckets; i++)
        {
            var partialShare = _partialCount == 0 ? 0 : (double)partial[i] / _partialCount;
            means[i] = (((double)full[i] / _chunkSize) + partialShare) / Count;
        }

        return means;
    }

    // Adds sum times the overlap of [start, start + length) with each decile to that decile, all in
    // tenth-item units: decile d covers [d * Count, (d + 1) * Count).
    private void Spread(long start, long length, long sum, Int128[] shares)
    {
        var end = start + length;
        for (var bucket = (int)(start / Count); bucket < Buckets && bucket * Count < end; bucket++)
        {
            var overlap = Math.Min(end, (bucket + 1) * Count) - Math.Max(start, bucket * Count);
            shares[bucket] += (Int128)sum * overlap;
        }
    }
}
