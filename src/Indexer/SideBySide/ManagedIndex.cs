namespace Indexing.Indexer;

// One index inside the manager: its serving generation (swapped atomically), the definition it
// serves, and its rebuild if one runs or just ended.
internal sealed class ManagedIndex
{
    private ServingIndex _active;

    public ManagedIndex(string name, IndexDefinition definition, ServingIndex active, RebuildSummary? lastRebuild)
    {
        Name = name;
        Definition = definition;
        _active = active;
        LastRebuild = lastRebuild;
    }

    public string Name { get; }

    public IndexDefinition Definition { get; private set; }

    public ServingIndex Active => Volatile.Read(ref _active);

    public RebuildRun? Rebuild { get; set; }

    public RebuildSummary? LastRebuild { get; set; }

    // The swap: from now on queries start on the replacement; returns the generation it replaced.
    public ServingIndex Swap(ServingIndex replacement, IndexDefinition definition)
    {
        Definition = definition;
        return Interlocked.Exchange(ref _active, replacement);
    }
}
