namespace Indexing.Indexer;

/// <summary>
/// Counting a verify's findings and keeping a sample of them, for <see cref="DocumentIndex.Verify"/>
/// and the manager's verify alike. Stateless: the caller owns the counts and lists.
/// </summary>
internal static class VerifySamples
{
    // Counts a finding and lists it while the list has room (the verify reports' samples).
    public static void CountAndList(List<string> list, string item, ref long count, int maxListed)
    {
        count++;
        if (list.Count < maxListed)
        {
            list.Add(item);
        }
    }

    // Every copy of an id past the first is a duplicate.
    public static void CountDuplicates(IndexIdEntry entry, List<string> list, ref long count, int maxListed)
    {
        for (var copy = 1; copy < entry.Copies; copy++)
        {
            CountAndList(list, entry.Id, ref count, maxListed);
        }
    }
}
