namespace Indexing.Datasets;

// An immutable list of UTF-8 words in one contiguous blob, indexed by rank. One array and one
// offset table instead of a string per word: the prose writer copies word bytes straight into
// document bodies, and building a list allocates no per-word objects.
internal sealed class WordList
{
    private readonly byte[] _blob;
    private readonly int[] _offsets;

    public WordList(byte[] blob, int[] offsets)
    {
        _blob = blob;
        _offsets = offsets;
    }

    public int Count => _offsets.Length - 1;

    public ReadOnlySpan<byte> this[int rank] => _blob.AsSpan(_offsets[rank], _offsets[rank + 1] - _offsets[rank]);
}
