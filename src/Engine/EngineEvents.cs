using System.Threading.Channels;
using Indexing.Indexer;

namespace Indexing.Engine;

/// <summary>
/// A rebuild of <paramref name="Index"/> started in, or moved to, <paramref name="Phase"/> at <paramref name="At"/>:
/// Bulk or CatchUp when it starts (CatchUp for a resume past its bulk phase), or first Queued when it has
/// to wait for a slot (<see cref="IndexOptions.MaxConcurrentRebuilds"/>; one that gets a slot at once
/// raises no Queued), then Swapping, and one of
/// Done, Failed or Cancelled. A rebuild that the engine's close stops raises no last phase: it resumes
/// at the next open, which raises its phases again. Read <see cref="IndexingEngine.GetRebuild"/> for the details.
/// </summary>
public sealed record RebuildEvent(string Index, RebuildPhase Phase, DateTimeOffset At);

/// <summary>
/// Raises <see cref="IndexingEngine.RebuildChanged"/> on a task of its own, in the order the rebuilds
/// moved: the manager tells it on its rebuild threads, sometimes under its lock, and a host's handler
/// must neither slow a rebuild down nor deadlock by calling back into the engine. Events are queued
/// from the start, and the task starts with the first handler: a rebuild that the open resumed has
/// already moved by the time a host can subscribe, and its first handler still gets those phases.
/// A handler that throws is the host's bug: the exception is dropped so later events still arrive.
/// </summary>
internal sealed class EngineEvents(object sender) : IAsyncDisposable
{
    private readonly Channel<RebuildEvent> _queue = Channel.CreateUnbounded<RebuildEvent>(new UnboundedChannelOptions { SingleReader = true });
    private readonly Lock _lock = new();
    private EventHandler<RebuildEvent>? _handlers;
    private Task? _raising;

    public void Add(EventHandler<RebuildEvent>? handler)
    {
        lock (_lock)
        {
            _handlers += handler;
            _raising ??= Task.Run(RaiseAsync);
        }
    }

    public void Remove(EventHandler<RebuildEvent>? handler)
    {
        lock (_lock)
        {
            _handlers -= handler;
        }
    }

    public void PhaseEntered(string index, RebuildPhase phase) => _queue.Writer.TryWrite(new RebuildEvent(index, phase, DateTimeOffset.UtcNow));

    // Events queued before the close are still raised; the close waits for them at most a second
    // (a handler that closes the engine would otherwise wait on itself).
    public async ValueTask DisposeAsync()
    {
        if (!_queue.Writer.TryComplete())
        {
            return;
        }

        Task? raising;
        lock (_lock)
        {
            raising = _raising;
        }

        if (raising is not null)
        {
            await raising.WaitAsync(TimeSpan.FromSeconds(1)).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        }
    }

    private async Task RaiseAsync()
    {
        await foreach (var change in _queue.Reader.ReadAllAsync().ConfigureAwait(false))
        {
            try
            {
                Volatile.Read(ref _handlers)?.Invoke(sender, change);
            }
            catch (Exception e) when (e is not OutOfMemoryException)
            {
                // The host's handler failed; the engine goes on (see the type's remarks).
            }
        }
    }
}
