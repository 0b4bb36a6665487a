using System.Threading.Channels;
using Indexing.Indexer;

namespace Indexing.Engine;

/// <summary>
/// A rebuild of <paramref name="Index"/> started in, or moved to, <paramref name="Phase"/> at <paramref name="At"/>:
/// Bulk or CatchUp when it starts (CatchUp for a resume past its bulk phase), then Swapping, and one of
/// Done, Failed or Cancelled. Read <see cref="IndexingEngine.GetRebuild"/> for the details.
/// </summary>
public sealed record RebuildEvent(string Index, RebuildPhase Phase, DateTimeOffset At);

/// <summary>
/// Raises <see cref="IndexingEngine.RebuildChanged"/> on a task of its own, in the order the rebuilds
/// moved: the manager tells it on its rebuild threads, sometimes under its lock, and a host's handler
/// must neither slow a rebuild down nor deadlock by calling back into the engine. A handler that
/// throws is the host's bug: the exception is dropped so later events still arrive.
/// </summary>
internal sealed class EngineEvents : IDisposable
{
    private readonly Channel<RebuildEvent> _queue = Channel.CreateUnbounded<RebuildEvent>(new UnboundedChannelOptions { SingleReader = true });
    private readonly Task _raising;

    public EngineEvents()
    {
        _raising = Task.Run(RaiseAsync);
    }

    public event EventHandler<RebuildEvent>? RebuildChanged;

    // The sender handed to handlers: the engine, once it exists.
    public object? Sender { get; set; }

    public void PhaseEntered(string index, RebuildPhase phase) => _queue.Writer.TryWrite(new RebuildEvent(index, phase, DateTimeOffset.UtcNow));

    // Events queued before the close are still raised; the close waits for them at most a second.
    public void Dispose()
    {
        if (_queue.Writer.TryComplete())
        {
            _raising.Wait(TimeSpan.FromSeconds(1));
        }
    }

    private async Task RaiseAsync()
    {
        await foreach (var change in _queue.Reader.ReadAllAsync().ConfigureAwait(false))
        {
            try
            {
                RebuildChanged?.Invoke(Sender, change);
            }
            catch (Exception e) when (e is not OutOfMemoryException)
            {
                // The host's handler failed; the engine goes on (see the type's remarks).
            }
        }
    }
}
