namespace Indexing.Indexer;

// Verify, as the manager's callers see it: the comparison and the one-at-a-time slots are
// IndexVerifier's; the manager finds the index and holds a lease on its serving generation.
internal sealed partial class IndexManager
{
    /// <summary>Compares the serving generation of <paramref name="name"/> with the store: missing, extra and stale entries.</summary>
    /// <exception cref="IndexNotFoundException">No index has that name.</exception>
    /// <exception cref="VerifyConflictException">A verify of the index is already running.</exception>
    public VerifyReport Verify(string name, CancellationToken cancellationToken = default)
    {
        var managed = Find(name);
        return _verifier.InSlot(
            managed.Name,
            () => OnServing(managed, serving => _verifier.Compare(serving, serving.Index.Definition.Collection, cancellationToken)));
    }

    /// <summary>Test hook: runs once a verify holds the index's verify slot, before it reads anything.</summary>
    internal Action<string>? VerifyStartedHook
    {
        get => _verifier.StartedHook;
        set => _verifier.StartedHook = value;
    }

    /// <summary>Test hook: runs after every id the verify walk has judged (the store's or the index's).</summary>
    internal Action<string>? VerifyStepHook
    {
        get => _verifier.StepHook;
        set => _verifier.StepHook = value;
    }
}
