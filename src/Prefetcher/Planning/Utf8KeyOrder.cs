namespace Indexing.Prefetcher;

// Orders .NET strings as their UTF-8 bytes order, which is the order RocksDB's bytewise comparator
// keeps ids in, without encoding them.
//
// UTF-8 byte order equals Unicode code point order. string.CompareOrdinal compares UTF-16 code
// units, which agrees with code point order everywhere except one case: a surrogate (D800..DFFF,
// half of a code point >= U+10000) sorts below U+E000..U+FFFF in UTF-16 but above them by code
// point. So the first differing code units are compared after moving E000..FFFF down to
// D800..F7FF and surrogates up to F800..FFFF; all other units keep their value. Cost: one
// vectorised common-prefix scan plus a compare, per pair of consecutive ids.
//
// Threading: stateless.
internal static class Utf8KeyOrder
{
    public static int Compare(string left, string right)
    {
        var a = left.AsSpan();
        var b = right.AsSpan();
        var common = a.CommonPrefixLength(b);
        if (common == a.Length || common == b.Length)
        {
            return a.Length.CompareTo(b.Length);
        }

        return CodePointOrderKey(a[common]).CompareTo(CodePointOrderKey(b[common]));
    }

    private static int CodePointOrderKey(char unit) => unit switch
    {
        >= '\uE000' => unit - 0x800,
        >= '\uD800' => unit + 0x2000,
        _ => unit,
    };
}
