using System.Globalization;
using System.Text;
using Indexing.Indexer;

namespace Indexing.Cluster;

/// <summary>
/// The cluster's page of a query from the shards' answers: each shard is asked the same query with
/// skip 0 and take skip + take (<see cref="ShardQuery"/>), and <see cref="Merge"/> sums their totals
/// and k-way merges their hits, then skips and takes.
/// <para>
/// <b>Sorted queries</b> merge exactly by the hits' <see cref="QueryHit.SortValues"/>, with Lucene's
/// own comparison: keywords as UTF-8 bytes, unsigned (Lucene's BytesRef order, which is code point
/// order: not <see cref="string.CompareOrdinal(string, string)"/>, whose UTF-16 order puts characters
/// above U+FFFF before U+E000..U+FFFF), a missing keyword (null) before every string; longs and doubles
/// numerically (doubles as Java's Double.compare: -0.0 before 0.0); a key starting with <c>-</c>
/// reverses its comparison, so a missing keyword comes last. A document without a numeric value
/// carries 0, as the shard sorted it (see <see cref="QueryHit.SortValues"/>).
/// </para>
/// <para>
/// <b>Relevance queries</b> merge by score, descending. The scores are each shard's own: Lucene's
/// TF-IDF (DefaultSimilarity) with that shard's term statistics (each term's document frequency, the
/// shard's document count), as Elasticsearch's default query_then_fetch does. There is no global
/// term-statistics step (no DFS): with documents hashed evenly over buckets the shards' statistics
/// converge as they grow, but small shards, or rare terms, can rank differently from one index holding
/// everything. The total, and the hits of all pages together, are exact; the page a hit lands on may
/// differ from one index's.
/// </para>
/// <para>
/// <b>Ties</b> (equal sort values, or equal scores) keep shard order, then each shard's own order: the
/// merge is stable, so the merged order is a total order given the shards' lists. One index breaks ties
/// by Lucene document id, which no merge can reproduce: pages agree with a single index's exactly only
/// where the sort values are unique.
/// </para>
/// </summary>
public static class ShardMerge
{
    /// <summary>
    /// What each shard is asked for the cluster's page of <paramref name="query"/>: the same query from
    /// its first hit, as many hits as the page reaches (skip + take), since any of them may be on it.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">
    /// Skip + take is over <see cref="IndexQuery.MaxTake"/>: a shard cannot return that many hits at once,
    /// so a cluster page reaches at most that deep.
    /// </exception>
    public static IndexQuery ShardQuery(IndexQuery query)
    {
        ArgumentNullException.ThrowIfNull(query);
        CheckPage(query);
        var depth = (long)query.Skip + query.Take;
        if (depth > IndexQuery.MaxTake)
        {
            throw new ArgumentOutOfRangeException(
                nameof(query), depth, $"Skip + Take is {depth:N0}; a cluster page can reach at most {IndexQuery.MaxTake:N0} hits deep, as each shard returns all of them at once.");
        }

        return query with { Skip = 0, Take = (int)depth };
    }

    /// <summary>
    /// The cluster's page of <paramref name="query"/>: the total of every shard's total hits, and its
    /// hits from the stable k-way merge of <paramref name="shards"/>' hit lists (in the order of the list),
    /// skipping <see cref="IndexQuery.Skip"/> and taking <see cref="IndexQuery.Take"/>. Each shard's
    /// answer must be to <see cref="ShardQuery"/> of the query: its hits in its own order, at least its
    /// first min(total, skip + take) of them (more are not read). The hits are the shards' own objects.
    /// </summary>
    /// <exception cref="ArgumentException">
    /// A shard's answer cannot be merged, each saying which shard and hit: fewer hits than the page needs
    /// or more than its total; a hit with a different number of sort values than the query has keys, or a
    /// value that is not a string, null or a number; a key holding strings in one hit and numbers in
    /// another, or null among numbers; hits out of the query's order; a score that is not a number.
    /// A sort key that is empty or only <c>-</c>.
    /// </exception>
    /// <exception cref="ArgumentOutOfRangeException">Skip is negative or take less than 1.</exception>
    public static QueryResult Merge(IndexQuery query, IReadOnlyList<QueryResult> shards)
    {
        ArgumentNullException.ThrowIfNull(query);
        ArgumentNullException.ThrowIfNull(shards);
        CheckPage(query);
        var keys = Keys(query.Sort);
        var depth = (int)Math.Min((long)query.Skip + query.Take, int.MaxValue);

        long totalHits = 0;
        var lists = new ShardList[shards.Count];
        for (var shard = 0; shard < shards.Count; shard++)
        {
            var answer = shards[shard] ?? throw new ArgumentException($"shard {shard}'s answer is null.", nameof(shards));
            lists[shard] = ShardList.Read(shard, answer, keys, depth);
            totalHits += answer.TotalHits;
        }

        CheckKinds(keys, lists);
        var order = new HitOrder(keys);
        foreach (var list in lists)
        {
            list.CheckOrder(order);
        }

        // Each shard's head is in the queue; equal heads come out lowest shard first.
        var heads = new PriorityQueue<(int Shard, int Position), (int Shard, int Position)>(
            Comparer<(int Shard, int Position)>.Create((a, b) =>
            {
                var compared = order.Compare(lists[a.Shard].Entry(a.Position), lists[b.Shard].Entry(b.Position));
                return compared != 0 ? compared : a.Shard.CompareTo(b.Shard);
            }));
        foreach (var list in lists)
        {
            if (list.Count > 0)
            {
                heads.Enqueue((list.Shard, 0), (list.Shard, 0));
            }
        }

        var page = new List<QueryHit>(Math.Min(query.Take, lists.Sum(l => l.Count)));
        for (var merged = 0; merged < depth && heads.TryDequeue(out var head, out _); merged++)
        {
            var list = lists[head.Shard];
            if (merged >= query.Skip)
            {
                page.Add(list.Entry(head.Position).Hit);
            }

            if (head.Position + 1 < list.Count)
            {
                heads.Enqueue((head.Shard, head.Position + 1), (head.Shard, head.Position + 1));
            }
        }

        return new QueryResult(totalHits, page);
    }

    /// <summary>
    /// How two hits' sort values compare under <paramref name="sort"/> (keys as <see cref="IndexQuery.Sort"/>
    /// spells them): negative when <paramref name="a"/> comes first, 0 for a tie, positive when
    /// <paramref name="b"/> does. The comparison <see cref="Merge"/> uses.
    /// </summary>
    /// <exception cref="ArgumentException">
    /// A list's length is not the number of keys, a value is not a string, null or a number, or the two
    /// hold a string and a number (or null and a number) for the same key.
    /// </exception>
    public static int CompareSortValues(IReadOnlyList<string> sort, IReadOnlyList<object?> a, IReadOnlyList<object?> b)
    {
        ArgumentNullException.ThrowIfNull(sort);
        ArgumentNullException.ThrowIfNull(a);
        ArgumentNullException.ThrowIfNull(b);
        var keys = Keys(sort);
        var first = SortKeys(keys, a, "a");
        var second = SortKeys(keys, b, "b");
        for (var i = 0; i < keys.Length; i++)
        {
            var kinds = first[i].Kind | second[i].Kind;
            if ((kinds & ValueKind.Number) != 0 && (kinds & (ValueKind.Null | ValueKind.Bytes)) != 0)
            {
                throw new ArgumentException(
                    $"sort key {MessageText.Quote(keys[i].Name)} holds {Describe(first[i].Kind)} in a and {Describe(second[i].Kind)} in b; a key's values are all strings (or null) or all numbers.");
            }
        }

        return HitOrder.CompareKeys(keys, first, second);
    }

    private static void CheckPage(IndexQuery query)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(query.Skip, nameof(query));
        ArgumentOutOfRangeException.ThrowIfLessThan(query.Take, 1, nameof(query));
    }

    private static Key[] Keys(IReadOnlyList<string> sort)
    {
        var keys = new Key[sort.Count];
        for (var i = 0; i < keys.Length; i++)
        {
            var spelled = sort[i];
            var descending = spelled is ['-', ..];
            var name = descending ? spelled[1..] : spelled;
            if (string.IsNullOrEmpty(name))
            {
                throw new ArgumentException($"sort key {i + 1} is {MessageText.Quote(spelled)}: a key is a field name, '-' first for descending.", nameof(sort));
            }

            keys[i] = new Key(name, descending);
        }

        return keys;
    }

    private static SortValue[] SortKeys(Key[] keys, IReadOnlyList<object?> values, string where)
    {
        if (values.Count != keys.Length)
        {
            throw new ArgumentException(
                $"{where} has {values.Count} sort values; the query has {keys.Length} sort keys ({string.Join(", ", keys.Select(k => k.Name))}).; each shard must answer the same query.");
        }

        var converted = new SortValue[keys.Length];
        for (var i = 0; i < converted.Length; i++)
        {
            converted[i] = values[i] switch
            {
                null => default,
                string text => new SortValue(ValueKind.Bytes, Utf8: Encoding.UTF8.GetBytes(text)),
                long number => new SortValue(ValueKind.Long, Long: number),
                int number => new SortValue(ValueKind.Long, Long: number),
                double number => new SortValue(ValueKind.Double, Double: number),
                var other => throw new ArgumentException(
                    $"{where}'s value of sort key {MessageText.Quote(keys[i].Name)} is a {other.GetType().Name}; sort values are strings, null, longs or doubles."),
            };
        }

        return converted;
    }

    // A key holds strings (null where a document has none) or numbers, never both: one field, one type.
    private static void CheckKinds(Key[] keys, ShardList[] lists)
    {
        for (var key = 0; key < keys.Length; key++)
        {
            (int Shard, Entry Entry)? number = null;
            (int Shard, Entry Entry)? notNumber = null;
            foreach (var list in lists)
            {
                for (var position = 0; position < list.Count && (number is null || notNumber is null); position++)
                {
                    var entry = list.Entry(position);
                    if ((entry.Values[key].Kind & ValueKind.Number) != 0)
                    {
                        number ??= (list.Shard, entry);
                    }
                    else
                    {
                        notNumber ??= (list.Shard, entry);
                    }
                }
            }

            if (number is { } n && notNumber is { } s)
            {
                throw new ArgumentException(
                    $"sort key {MessageText.Quote(keys[key].Name)} holds a number in shard {n.Shard}'s hit {n.Entry.Position} ({MessageText.Quote(n.Entry.Hit.Id)}) " +
                    $"and {Describe(s.Entry.Values[key].Kind)} in shard {s.Shard}'s hit {s.Entry.Position} ({MessageText.Quote(s.Entry.Hit.Id)}); " +
                    "a key's values are all strings (null where a document has none) or all numbers.",
                    "shards");
            }
        }
    }

    private static string Describe(ValueKind kind) => kind switch
    {
        ValueKind.Null => "null",
        ValueKind.Bytes => "a string",
        _ => "a number",
    };

    [Flags]
    private enum ValueKind : byte
    {
        Null = 0,
        Bytes = 1,
        Long = 2,
        Double = 4,
        Number = Long | Double,
    }

    private readonly record struct Key(string Name, bool Descending);

    // One sort value as compared: a string as its UTF-8 bytes (encoded once per hit, not per comparison).
    private readonly record struct SortValue(ValueKind Kind, byte[]? Utf8 = null, long Long = 0, double Double = 0);

    // A shard's hit with its position in the shard's list and its converted sort values.
    private sealed record Entry(QueryHit Hit, int Position, SortValue[] Values);

    private sealed class ShardList
    {
        private readonly Entry[] _entries;

        private ShardList(int shard, Entry[] entries)
        {
            Shard = shard;
            _entries = entries;
        }

        public int Shard { get; }

        public int Count => _entries.Length;

        public Entry Entry(int position) => _entries[position];

        // The first min(total, depth) hits: all that can be on the page.
        public static ShardList Read(int shard, QueryResult answer, Key[] keys, int depth)
        {
            var hits = answer.Hits ?? throw new ArgumentException($"shard {shard}'s hits are null.", "shards");
            if (answer.TotalHits < 0 || hits.Count > answer.TotalHits)
            {
                throw new ArgumentException($"shard {shard} returned {hits.Count:N0} hits of a total of {answer.TotalHits:N0}; a total counts every hit.", "shards");
            }

            var needed = (int)Math.Min(answer.TotalHits, depth);
            if (hits.Count < needed)
            {
                throw new ArgumentException(
                    $"shard {shard} returned {hits.Count:N0} hits of its {answer.TotalHits:N0}; the page needs its first {needed:N0} (skip + take, or all it has). " +
                    "Ask each shard with ShardQuery (skip 0, take skip + take).",
                    "shards");
            }

            var entries = new Entry[needed];
            for (var position = 0; position < needed; position++)
            {
                var hit = hits[position] ?? throw new ArgumentException($"shard {shard}'s hit {position} is null.", "shards");
                if (float.IsNaN(hit.Score))
                {
                    throw new ArgumentException($"shard {shard}'s hit {position} ({MessageText.Quote(hit.Id)}) has a score that is not a number.", "shards");
                }

                var values = hit.SortValues ?? throw new ArgumentException($"shard {shard}'s hit {position} ({MessageText.Quote(hit.Id)}) has null sort values.", "shards");
                SortValue[] converted;
                try
                {
                    converted = SortKeys(keys, values, $"shard {shard}'s hit {position} ({MessageText.Quote(hit.Id)})");
                }
                catch (ArgumentException e)
                {
                    throw new ArgumentException(e.Message, "shards", e);
                }

                entries[position] = new Entry(hit, position, converted);
            }

            return new ShardList(shard, entries);
        }

        // A shard's own list is in the query's order: otherwise it answered another query, or a bug did.
        public void CheckOrder(HitOrder order)
        {
            for (var position = 1; position < _entries.Length; position++)
            {
                if (order.Compare(_entries[position - 1], _entries[position]) > 0)
                {
                    var before = _entries[position - 1];
                    var after = _entries[position];
                    throw new ArgumentException(
                        $"shard {Shard}'s hits {position - 1} ({MessageText.Quote(before.Hit.Id)}, {order.Describe(before)}) and {position} ({MessageText.Quote(after.Hit.Id)}, {order.Describe(after)}) " +
                        "are out of the query's order; each shard must answer the same query, sorted the same way.",
                        "shards");
                }
            }
        }
    }

    // The merge's order of two hits: by the sort keys, or by score (descending) when there are none.
    private sealed class HitOrder(Key[] keys)
    {
        public int Compare(Entry a, Entry b)
        {
            return keys.Length == 0 ? b.Hit.Score.CompareTo(a.Hit.Score) : CompareKeys(keys, a.Values, b.Values);
        }

        public static int CompareKeys(Key[] keys, SortValue[] a, SortValue[] b)
        {
            for (var i = 0; i < keys.Length; i++)
            {
                var compared = CompareValues(a[i], b[i]);
                if (compared != 0)
                {
                    return keys[i].Descending ? -compared : compared;
                }
            }

            return 0;
        }

        public string Describe(Entry entry) => keys.Length == 0
            ? $"score {entry.Hit.Score.ToString("R", CultureInfo.InvariantCulture)}"
            : $"sort values [{string.Join(", ", entry.Hit.SortValues.Select(Show))}]";

        private static string Show(object? value) => value switch
        {
            null => "null",
            string text => MessageText.Quote(text),
            IFormattable number => number.ToString(null, CultureInfo.InvariantCulture),
            _ => value.ToString() ?? "",
        };

        // Kinds are checked first: within one key, values are null or bytes, or numbers.
        private static int CompareValues(SortValue a, SortValue b)
        {
            switch (a.Kind, b.Kind)
            {
                case (ValueKind.Null, ValueKind.Null):
                    return 0;
                case (ValueKind.Null, _):
                    return -1;
                case (_, ValueKind.Null):
                    return 1;
                case (ValueKind.Bytes, ValueKind.Bytes):
                    // Unsigned bytes, then length: BytesRef.CompareTo (UTF8SortedAsUnicode).
                    return a.Utf8.AsSpan().SequenceCompareTo(b.Utf8);
                case (ValueKind.Long, ValueKind.Long):
                    return a.Long.CompareTo(b.Long);
                case (ValueKind.Double, ValueKind.Double):
                    return JavaCompare(a.Double, b.Double);
                case (ValueKind.Long, ValueKind.Double):
                    return CompareLongToDouble(a.Long, b.Double);
                case (ValueKind.Double, ValueKind.Long):
                    return -CompareLongToDouble(b.Long, a.Double);
                default:
                    throw new InvalidOperationException($"sort values of kinds {a.Kind} and {b.Kind} in one key.");
            }
        }

        // Java's Double.compare, which Lucene.Net's DoubleComparer follows: -0.0 before 0.0, NaN last.
        private static int JavaCompare(double a, double b)
        {
            if (a < b)
            {
                return -1;
            }

            if (a > b)
            {
                return 1;
            }

            return Bits(a).CompareTo(Bits(b));

            static long Bits(double value) => double.IsNaN(value) ? 0x7ff8000000000000L : BitConverter.DoubleToInt64Bits(value);
        }

        // Exactly, without rounding the long to a double (a shard's JSON may give 3 for a double field's 3.0).
        private static int CompareLongToDouble(long a, double b)
        {
            if (double.IsNaN(b) || b >= 9.2233720368547758E18)
            {
                return -1;
            }

            if (b < -9.2233720368547758E18)
            {
                return 1;
            }

            var floor = Math.Floor(b);
            var whole = (long)floor;
            if (a != whole)
            {
                return a.CompareTo(whole);
            }

            return b > floor ? -1 : 0;
        }
    }
}
