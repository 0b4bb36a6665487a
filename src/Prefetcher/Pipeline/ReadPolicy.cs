namespace Indexing.Prefetcher;

/// <summary>
/// What the three <see cref="PrefetchStrategy"/> values do differently over the one pipeline: how
/// tasks are cut, who sets L, and when a read may be issued (the baselines at L = 1: FixedBatch once
/// the consumer begins the read before, Sequential when a take finds nothing ready). Threading:
/// <see cref="ConsumerBegan"/> and <see cref="NothingReady"/> from the consumer's take.
/// </summary>
internal sealed class ReadPolicy
{
    // Sequential: 1 from a take's request until the consumer begins that read, so that a take
    // cancelled while waiting does not make the next take ask again.
    private int _requested;

    /// <param name="remembered">Where a prefetch reading the same device alone settled: the adaptive controller starts there.</param>
    public ReadPolicy(PrefetchStrategy strategy, PrefetchOptions options, RememberedConcurrency? remembered = null)
    {
        Strategy = strategy;
        if (strategy == PrefetchStrategy.Adaptive)
        {
            Controller = new ConcurrencyController(options.Controller, remembered, options.BudgetBytes);
            Plan = PlanOptions.ForBudget(options.BudgetBytes, options.Controller.FirstTaskBytes);
            MaxReaders = options.Controller.MaxConcurrency;
        }
        else
        {
            Plan = PlanOptions.FixedCount(options.BaselineBatchDocuments);
            MaxReaders = 1;
        }
    }

    public PrefetchStrategy Strategy { get; }

    /// <summary>Sets L and the task size each tick; null for the baselines.</summary>
    public ConcurrencyController? Controller { get; }

    public PlanOptions Plan { get; }

    /// <summary>Reader threads at most (they start only as L grows).</summary>
    public int MaxReaders { get; }

    public int InitialConcurrency => Controller?.Concurrency ?? 1;

    /// <summary>Reads admitted before the consumer grants more (see <see cref="ReadAdmission.GrantCredit"/>); null: no such bound.</summary>
    public int? InitialCredits => Strategy switch
    {
        PrefetchStrategy.Adaptive => null,
        PrefetchStrategy.FixedBatch => 1,
        _ => 0,
    };

    /// <summary>The consumer began taking a completed read (under the take's lock: keep it short).</summary>
    public void ConsumerBegan(ReadAdmission admission)
    {
        if (Strategy == PrefetchStrategy.FixedBatch)
        {
            admission.GrantCredit();
        }
        else if (Strategy == PrefetchStrategy.Sequential)
        {
            Volatile.Write(ref _requested, 0);
        }
    }

    /// <summary>A take found nothing ready and is about to wait.</summary>
    public void NothingReady(ReadAdmission admission)
    {
        if (Strategy == PrefetchStrategy.Sequential && Interlocked.Exchange(ref _requested, 1) == 0)
        {
            admission.GrantCredit();
        }
    }
}
