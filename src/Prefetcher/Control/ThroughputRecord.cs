namespace Indexing.Prefetcher;

/// <summary>
/// The last mean throughput the climb measured at each L, and when: what a downward probe and the
/// queueing rule's veto ask of the L below. A record counts only while fresh (younger than the
/// latency baseline's window): the device and the documents change under a long rebuild.
/// <para>
/// Not thread-safe: owned by its <see cref="HillClimber"/>, on the controller's tick loop.
/// </para>
/// </summary>
internal sealed class ThroughputRecord(TimeSpan freshFor)
{
    private readonly (double BytesPerSecond, TimeSpan At)?[] _at =
        new (double, TimeSpan)?[ControllerOptions.AbsoluteMaxConcurrency + 1];

    /// <summary>Records what <paramref name="l"/> delivered, measured up to <paramref name="now"/>.</summary>
    public void Record(int l, double bytesPerSecond, TimeSpan now) => _at[l] = (bytesPerSecond, now);

    /// <summary>What <paramref name="l"/> delivered when last measured, if that is fresh; null otherwise.</summary>
    public double? Fresh(int l, TimeSpan now) =>
        _at[l] is { } entry && now - entry.At < freshFor ? entry.BytesPerSecond : null;

    /// <summary>
    /// Where a queueing cut from <paramref name="l"/> to <paramref name="to"/> goes by the record, or
    /// null for none. Latency may rise for a good reason, more parallel reads that really deliver
    /// more, so the cut asks the record: it goes to <paramref name="to"/> when the best L on record
    /// at or below it delivered within <paramref name="minGain"/> of what L delivers
    /// (<paramref name="current"/>), or nothing is on record below L; otherwise only as far as the
    /// fewest readers on record that delivered as much as L, or nowhere. Judged against where the cut
    /// goes, not the best L in between: on a device that bends gradually no L just below a high one
    /// beats it by the minimum gain while all of them deliver clearly more than where the cut goes,
    /// and such cuts fired (docs/decisions/0003-first-tasks-ramp.md). With L not measured yet (null
    /// <paramref name="current"/>) and a record below it, the cut goes only once
    /// <paramref name="waitedEnough"/>.
    /// </summary>
    public (int L, string Note)? CutTo(int l, int to, TimeSpan now, double? current, bool waitedEnough, double minGain)
    {
        var atOrBelow = Enumerable.Range(1, to).Select(lower => Fresh(lower, now)).Max();
        var between = Enumerable.Range(to + 1, l - 1 - to)
            .Select(lower => (L: lower, Throughput: Fresh(lower, now)))
            .Where(record => record.Throughput is not null)
            .ToList();
        if (atOrBelow is null && between.Count == 0)
        {
            return (to, "");
        }
        if (current is not { } delivered)
        {
            return waitedEnough ? (to, "") : null;
        }
        if (atOrBelow is { } reference && delivered < reference * (1 + minGain))
        {
            return (to, "");
        }
        foreach (var (lower, throughput) in between)
        {
            if (throughput * (1 + minGain) >= delivered)
            {
                return (lower, $"; L={lower} delivered as much");
            }
        }
        return null;
    }
}
