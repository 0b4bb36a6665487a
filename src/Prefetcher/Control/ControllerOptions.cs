using Indexing.Storage;

using Microsoft.Extensions.Options;

namespace Indexing.Prefetcher;

/// <summary>Tuning of the controller and task sizing, validated by <see cref="ControllerOptionsValidator"/> when used.</summary>
internal sealed record ControllerOptions
{
    /// <summary>No configuration may exceed this many concurrent read tasks.</summary>
    public const int AbsoluteMaxConcurrency = 64;

    public int InitialConcurrency { get; init; } = 2;

    /// <summary>The ceiling of L, whatever the core count: the useful L follows the device, not the cores.</summary>
    public int MaxConcurrency { get; init; } = AbsoluteMaxConcurrency;

    /// <summary>When set, L stays at this value (a live limit still clamps): for measuring a fixed L (the BestFixed bound).</summary>
    public int? FixedConcurrency { get; init; }

    /// <summary>
    /// Relative throughput gain a step up must show to be kept (0.05 = +5%); outside slow start a
    /// step is a quarter of L (at least one reader). In slow start a doubling continues only with
    /// 75% of its proportional gain, and one gaining less than this goes back.
    /// </summary>
    public double GrowthMinGain { get; init; } = 0.05;

    /// <summary>After a change of concurrency, ticks in this time are not measured (reads in flight still reflect the old value).</summary>
    public TimeSpan SettleTime { get; init; } = TimeSpan.FromMilliseconds(500);

    /// <summary>How long throughput is averaged at one concurrency before it is compared (never fewer than three ticks).</summary>
    public TimeSpan MeasureTime { get; init; } = TimeSpan.FromSeconds(1);

    /// <summary>A probe whose result is not yet clear of the minimum gain measures on, up to this long.</summary>
    public TimeSpan MaxMeasureTime { get; init; } = TimeSpan.FromSeconds(4);

    /// <summary>How long to stay at a concurrency that neighbours did not beat before probing again.</summary>
    public TimeSpan PlateauTime { get; init; } = TimeSpan.FromSeconds(10);

    /// <summary>Reads taking more than this multiple of their un-queued time (within their size class) are queueing.</summary>
    public double LatencyInflationLimit { get; init; } = 2.0;

    /// <summary>Window of each size class's un-queued baseline, and of the throughputs the queueing rule compares.</summary>
    public TimeSpan LatencyBaselineWindow { get; init; } = TimeSpan.FromSeconds(30);

    /// <summary>At most this multiplier on a queueing cut: L / inflation when lower, never below half of L at once.</summary>
    public double QueueingCutFactor { get; init; } = 0.75;

    /// <summary>Foreground target = this factor x the learned idle foreground p99 (unless <see cref="ForegroundTarget"/> is set).</summary>
    public double ForegroundTargetFactor { get; init; } = 1.3;

    /// <summary>An explicit foreground p99 target; replaces the learned one.</summary>
    public TimeSpan? ForegroundTarget { get; init; }

    /// <summary>Window over which the idle foreground baseline is the minimum observed p99.</summary>
    public TimeSpan ForegroundBaselineWindow { get; init; } = TimeSpan.FromMinutes(10);

    /// <summary>Multiplier applied to concurrency when the foreground misses its target.</summary>
    public double ForegroundCutFactor { get; init; } = 0.5;

    /// <summary>After a cut, no further cut or growth until its effect shows.</summary>
    public TimeSpan CooldownAfterCut { get; init; } = TimeSpan.FromSeconds(2);

    /// <summary>
    /// L is at most this multiple of the budget over the largest recent document. 2, not 1: giants are
    /// rarely all in flight at once, and a ceiling of the budget over the largest left too few readers
    /// and stalled the indexer (benchmarks/results/README.md, "Other figures", the size ceiling).
    /// </summary>
    public double LargeDocumentBudgetFraction { get; init; } = 2.0;

    /// <summary>Buffered bytes at or above this share of the budget: the indexer is the bottleneck.</summary>
    public double BufferFullFraction { get; init; } = 0.9;

    /// <summary>The indexer is the bottleneck when it waited less than this share of the window and of the tick...</summary>
    public double BusyConsumerMaxWaitFraction { get; init; } = 0.01;

    /// <summary>...this window, not one tick: a giant keeps the indexer busy a tick or two even when it waits for the next...</summary>
    public TimeSpan BusyConsumerWindow { get; init; } = TimeSpan.FromSeconds(1);

    /// <summary>...while at least this share of the budget is buffered; then more readers cannot help.</summary>
    public double BusyConsumerMinBufferedFraction { get; init; } = 0.1;

    /// <summary>Read tasks are sized to about this much I/O for one stream.</summary>
    public TimeSpan TargetTaskDuration { get; init; } = TimeSpan.FromMilliseconds(75);

    public long MinTaskBytes { get; init; } = 256 * 1024;

    public long MaxTaskBytes { get; init; } = 64 * 1024 * 1024;

    /// <summary>Task size before any throughput was measured (75 ms at a 60 MB/s stream).</summary>
    public long InitialTaskBytes { get; init; } = 4 * 1024 * 1024;

    /// <summary>
    /// The run's first task of small documents; the next ones double from it up to the target
    /// (<see cref="InitialTaskBytes"/> until a rate is measured); at or above the target, no ramp.
    /// 256 KiB is 36 ms on a slow stream (8 MB/s, 4 ms a request), where a first 4 MiB task keeps
    /// the indexer waiting half a second (docs/decisions/0003).
    /// </summary>
    public long FirstTaskBytes { get; init; } = 256 * 1024;

    /// <summary>Window of the per-stream throughput maximum used for task sizing.</summary>
    public TimeSpan TaskSizingWindow { get; init; } = TimeSpan.FromSeconds(10);

    /// <summary>Runs <see cref="ControllerOptionsValidator"/>: throws <see cref="OptionsValidationException"/> naming every invalid setting; returns this.</summary>
    public ControllerOptions Validate() => OptionProblems.ThrowIfInvalid(new ControllerOptionsValidator(), this);

    public override string ToString()
    {
        var tasks = $"tasks {ControlText.Duration(TargetTaskDuration)} of I/O in [{ByteSize.Format(MinTaskBytes)}, {ByteSize.Format(MaxTaskBytes)}], " +
            $"first {ByteSize.Format(FirstTaskBytes)} doubling to {ByteSize.Format(InitialTaskBytes)}, per-stream max over {ControlText.Duration(TaskSizingWindow)}";
        if (FixedConcurrency is { } fixedL)
        {
            return $"controller: L fixed at {fixedL}; {tasks}";
        }
        var foreground = ForegroundTarget is { } target
            ? $"foreground p99 target {ControlText.Duration(target)}"
            : $"foreground p99 target {ControlText.Factor(ForegroundTargetFactor)} its {ControlText.Duration(ForegroundBaselineWindow)} minimum";
        return
            $"controller: L {InitialConcurrency}..{MaxConcurrency}, " +
            $"keep a step of {ControlText.Factor(HillClimber.FineStepFactor)} (at least +1) if it adds >= {ControlText.Percent(GrowthMinGain)} throughput, settle {ControlText.Duration(SettleTime)}, " +
            $"measure {ControlText.Duration(MeasureTime)}..{ControlText.Duration(MaxMeasureTime)}, plateau {ControlText.Duration(PlateauTime)}; " +
            $"slow start doubles while it pays; " +
            $"cut to <= {ControlText.Factor(QueueingCutFactor)} when reads take > {ControlText.Factor(LatencyInflationLimit)} their un-queued time (per size class, {ControlText.Duration(LatencyBaselineWindow)} minimum); " +
            $"{foreground}, cut to {ControlText.Factor(ForegroundCutFactor)}; " +
            $"L x largest recent document <= {ControlText.Percent(LargeDocumentBudgetFraction)} of budget; cooldown {ControlText.Duration(CooldownAfterCut)}; " +
            $"hold when buffered >= {ControlText.Percent(BufferFullFraction)} of budget or indexer waited < {ControlText.Percent(BusyConsumerMaxWaitFraction)} " +
            $"over {ControlText.Duration(BusyConsumerWindow)} " +
            $"with >= {ControlText.Percent(BusyConsumerMinBufferedFraction)} buffered; {tasks}";
    }
}

/// <summary>The rules of <see cref="ControllerOptions"/>, each problem naming the setting, its value and the rule.</summary>
internal sealed class ControllerOptionsValidator : IValidateOptions<ControllerOptions>
{
    public ValidateOptionsResult Validate(string? name, ControllerOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var problems = new OptionProblems(nameof(ControllerOptions) + ".");
        problems.InRange(options.MaxConcurrency, 1, ControllerOptions.AbsoluteMaxConcurrency, nameof(ControllerOptions.MaxConcurrency));
        problems.InRange(options.InitialConcurrency, 1, options.MaxConcurrency, nameof(ControllerOptions.InitialConcurrency));
        problems.Require(options.FixedConcurrency is null || (options.FixedConcurrency >= 1 && options.FixedConcurrency <= options.MaxConcurrency),
            $"{nameof(ControllerOptions.FixedConcurrency)} must be in [1, {nameof(ControllerOptions.MaxConcurrency)} = {options.MaxConcurrency}] when set (was {options.FixedConcurrency})");
        problems.InRange(options.GrowthMinGain, 0, 1, nameof(ControllerOptions.GrowthMinGain));
        problems.Positive(options.SettleTime, nameof(ControllerOptions.SettleTime));
        problems.Positive(options.MeasureTime, nameof(ControllerOptions.MeasureTime));
        problems.Require(options.MaxMeasureTime >= options.MeasureTime, $"{nameof(ControllerOptions.MaxMeasureTime)} must be at least {nameof(ControllerOptions.MeasureTime)}");
        problems.Positive(options.PlateauTime, nameof(ControllerOptions.PlateauTime));
        problems.InRange(options.LatencyInflationLimit, 1.01, 100, nameof(ControllerOptions.LatencyInflationLimit));
        problems.Positive(options.LatencyBaselineWindow, nameof(ControllerOptions.LatencyBaselineWindow));
        problems.Require(options.QueueingCutFactor is > 0 and < 1, $"{nameof(ControllerOptions.QueueingCutFactor)} must be in (0, 1) (was {options.QueueingCutFactor})");
        problems.InRange(options.ForegroundTargetFactor, 1.01, 100, nameof(ControllerOptions.ForegroundTargetFactor));
        problems.Require(options.ForegroundTarget is null || options.ForegroundTarget > TimeSpan.Zero, $"{nameof(ControllerOptions.ForegroundTarget)} must be positive when set");
        problems.Positive(options.ForegroundBaselineWindow, nameof(ControllerOptions.ForegroundBaselineWindow));
        problems.Require(options.ForegroundCutFactor is > 0 and < 1, $"{nameof(ControllerOptions.ForegroundCutFactor)} must be in (0, 1) (was {options.ForegroundCutFactor})");
        problems.InRange(options.LargeDocumentBudgetFraction, 0.1, 16, nameof(ControllerOptions.LargeDocumentBudgetFraction));
        problems.Require(options.CooldownAfterCut >= TimeSpan.Zero, $"{nameof(ControllerOptions.CooldownAfterCut)} must not be negative");
        problems.Require(options.BufferFullFraction is > 0 and <= 1, $"{nameof(ControllerOptions.BufferFullFraction)} must be in (0, 1] (was {options.BufferFullFraction})");
        problems.InRange(options.BusyConsumerMaxWaitFraction, 0, 1, nameof(ControllerOptions.BusyConsumerMaxWaitFraction));
        problems.InRange(options.BusyConsumerMinBufferedFraction, 0, 1, nameof(ControllerOptions.BusyConsumerMinBufferedFraction));
        problems.Positive(options.BusyConsumerWindow, nameof(ControllerOptions.BusyConsumerWindow));
        problems.Positive(options.TargetTaskDuration, nameof(ControllerOptions.TargetTaskDuration));
        problems.Require(options.MinTaskBytes > 0 && options.MinTaskBytes <= options.MaxTaskBytes, $"{nameof(ControllerOptions.MinTaskBytes)} must be positive and at most {nameof(ControllerOptions.MaxTaskBytes)}");
        problems.Require(options.InitialTaskBytes >= options.MinTaskBytes && options.InitialTaskBytes <= options.MaxTaskBytes, $"{nameof(ControllerOptions.InitialTaskBytes)} must be within [{nameof(ControllerOptions.MinTaskBytes)}, {nameof(ControllerOptions.MaxTaskBytes)}]");
        problems.Require(options.FirstTaskBytes >= options.MinTaskBytes, $"{nameof(ControllerOptions.FirstTaskBytes)} must be at least {nameof(ControllerOptions.MinTaskBytes)} = {options.MinTaskBytes} (was {options.FirstTaskBytes})");
        problems.Positive(options.TaskSizingWindow, nameof(ControllerOptions.TaskSizingWindow));
        return problems.Result;
    }
}
