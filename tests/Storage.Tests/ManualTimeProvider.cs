namespace Indexing.Storage.Tests;

/// <summary>A clock that only moves when a test advances it.</summary>
internal sealed class ManualTimeProvider : TimeProvider
{
    private static readonly DateTimeOffset _start = new(2025, 1, 1, 0, 0, 0, TimeSpan.Zero);
    private long _ticks;

    public override long TimestampFrequency => TimeSpan.TicksPerSecond;

    public override long GetTimestamp() => Interlocked.Read(ref _ticks);

    public override DateTimeOffset GetUtcNow() => _start.AddTicks(Interlocked.Read(ref _ticks));

    public void Advance(TimeSpan by) => Interlocked.Add(ref _ticks, by.Ticks);
}
