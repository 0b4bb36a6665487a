using System.Runtime.CompilerServices;

namespace Indexing.Prefetcher;

// The tick, jittered so that decisions do not lock step with other periodic work (the first comes
// sooner: PrefetchOptions.FirstTickInterval): the controller, if any, decides, and the pressure
// view is published (also by the thread that ends the run). Ticks run on the thread pool, as they
// never block; one that throws fails the run.
internal sealed partial class PrefetchPipeline
{
    private readonly CancellationTokenSource _stopTicks = new();
    private readonly Lock _publishLock = new();
    private readonly double _sizeDecayFactor;
    private Task _ticks = Task.CompletedTask;
    private long _targetTaskBytes;
    private long _foregroundP99Ticks = -1;
    private StrongBox<ControllerDecision>? _lastDecision;

    /// <inheritdoc />
    public PrefetchPressure Pressure => _meter.Latest;

    private async Task TickAsync()
    {
        try
        {
            var interval = _options.FirstTick;
            while (true)
            {
                var jitter = 1 + (_options.TickJitterFraction * ((2 * Random.Shared.NextDouble()) - 1));
                await Task.Delay(interval * jitter, _stopTicks.Token).ConfigureAwait(false);
                Tick();
                interval = _options.TickInterval;
            }
        }
        catch (OperationCanceledException) when (_stopTicks.IsCancellationRequested)
        {
        }
        catch (Exception exception)
        {
            Fail(exception);
        }
    }

    private void Tick()
    {
        var signals = _meter.Tick();
        if (_policy.Controller is { } controller)
        {
            var foreground = ForegroundSignal.P99(_options.ForegroundLatency);
            Volatile.Write(ref _foregroundP99Ticks, foreground?.Ticks ?? -1);
            if (State is PrefetchState.Planning or PrefetchState.Running)
            {
                // Others reading the device too: this prefetch runs its share of the device's L.
                var share = _device?.Share(_options.Controller.MaxConcurrency);
                var limit = share is { } shared ? Math.Min(shared, signals.MaxConcurrency ?? int.MaxValue) : signals.MaxConcurrency;
                var decision = controller.Decide(signals with
                {
                    ForegroundP99 = foreground,
                    MemoryHigh = IsMemoryHigh(),
                    MaxConcurrency = limit,
                    DeviceReaders = share is null ? 1 : _device!.Readers,
                });
                Volatile.Write(ref _lastDecision, new StrongBox<ControllerDecision>(decision));
                Volatile.Write(ref _targetTaskBytes, decision.TargetTaskBytes);
                Admission.SetConcurrency(decision.Concurrency);
                RememberIfSettled(controller, decision, share);
            }
        }

        _meter.Sizes.Decay(_sizeDecayFactor);
        Publish();
    }

    // A plateau on a device read alone is where the device settles, unless an operator's cap pinned L
    // there (that says nothing of the device): the next prefetch on it starts there.
    private void RememberIfSettled(ConcurrencyController controller, ControllerDecision decision, int? share)
    {
        if (_device is not null && share is null && controller.Settled && decision.Concurrency != Admission.Limits.MaxConcurrency)
        {
            _device.Remember(decision.Concurrency, controller.StreamBytesPerSecond);
        }
    }

    // Serialised, so that a tick's snapshot cannot overwrite a newer one published at the end.
    private void Publish()
    {
        lock (_publishLock)
        {
            PrefetchState state;
            string? failure;
            lock (_stateLock)
            {
                state = _state;
                failure = _failure?.SourceException.Message;
            }

            var foreground = Volatile.Read(ref _foregroundP99Ticks);
            _meter.Publish(new PressureView(
                state,
                _ready.Queued,
                failure,
                foreground < 0 ? null : TimeSpan.FromTicks(foreground),
                Volatile.Read(ref _lastDecision)?.Value,
                _policy.Controller?.History ?? []));
        }
    }

    // The GC's own notion of "high memory load" (90% of the machine or container limit by default).
    private static bool IsMemoryHigh()
    {
        var info = GC.GetGCMemoryInfo();
        return info.HighMemoryLoadThresholdBytes > 0 && info.MemoryLoadBytes >= info.HighMemoryLoadThresholdBytes;
    }
}
