namespace Indexing.Datasets;

// Samples ranks 0..n-1 with probability proportional to 1 / (rank + 1)^exponent (Zipf's law), in
// constant time by Walker's alias method (Vose's construction): each of n equal columns holds its
// own rank with some probability and one other rank otherwise. Words, customers, products and
// tags all use it, so frequent values really are frequent, as in real collections.
internal sealed class ZipfTable
{
    private readonly uint[] _keepBelow;
    private readonly int[] _alias;

    public ZipfTable(int count, double exponent)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(count);
        var scaled = new double[count];
        var sum = 0.0;
        for (var i = 0; i < count; i++)
        {
            scaled[i] = Math.Pow(i + 1, -exponent);
            sum += scaled[i];
        }

        _keepBelow = new uint[count];
        _alias = new int[count];
        var small = new Stack<int>();
        var large = new Stack<int>();
        for (var i = 0; i < count; i++)
        {
            scaled[i] *= count / sum;
            (scaled[i] < 1 ? small : large).Push(i);
        }

        while (small.Count > 0 && large.Count > 0)
        {
            var under = small.Pop();
            var over = large.Peek();
            SetColumn(under, scaled[under], over);
            scaled[over] -= 1 - scaled[under];
            if (scaled[over] < 1)
            {
                small.Push(large.Pop());
            }
        }

        // What is left is 1 up to rounding: those columns keep their own rank.
        foreach (var rest in small.Concat(large))
        {
            SetColumn(rest, 1, rest);
        }
    }

    public int Count => _alias.Length;

    public int Sample(ref Prng rng)
    {
        var bits = rng.NextUInt64();
        var column = (int)(((bits >> 32) * (ulong)_alias.Length) >> 32);
        return (uint)bits < _keepBelow[column] ? column : _alias[column];
    }

    private void SetColumn(int column, double keepProbability, int alias)
    {
        _keepBelow[column] = keepProbability >= 1 ? uint.MaxValue : (uint)(keepProbability * 4294967296.0);
        _alias[column] = alias;
    }
}
