namespace Indexing.Indexer;

// One index inside the manager: its serving generation (swapped atomically), the definition it
// serves, and its rebuild if one runs or just ended. An index whose serving generation could not
// be opened at startup has no Active generation but an OpenFailure: it answers nothing until a
// rebuild replaces that generation (or a restart opens it).
internal sealed class ManagedIndex
{
    private ServingIndex? _active;
    private string? _openFailure;
    private bool _deleted;

    public ManagedIndex(string name, IndexDefinition? definition, int generation, ServingIndex? active, string? openFailure, RebuildSummary? lastRebuild)
    {
        Name = name;
        Definition = definition;
        Generation = generation;
        _active = active;
        _openFailure = openFailure;
        LastRebuild = lastRebuild;
    }

    public string Name { get; }

    // Null only when the catalog's definition could not be read (OpenFailure says why).
    public IndexDefinition? Definition { get; private set; }

    // The generation the catalog names as serving (also when it could not be opened).
    public int Generation { get; private set; }

    public ServingIndex? Active => Volatile.Read(ref _active);

    public string? OpenFailure => Volatile.Read(ref _openFailure);

    public RebuildRun? Rebuild { get; set; }

    // Set (under the manager's lock) once a delete removed the index from the catalog: a query that
    // found it before then and meets its retired generation answers not found instead of waiting
    // for a swap that never comes.
    public bool Deleted
    {
        get => Volatile.Read(ref _deleted);
        set => Volatile.Write(ref _deleted, value);
    }
    public RebuildSummary? LastRebuild { get; set; }

    // The swap: from now on queries start on the replacement; returns the generation it replaced
    // (null when none was open). Caller holds the manager's lock.
    public ServingIndex? Swap(ServingIndex replacement, IndexDefinition definition)
    {
        Definition = definition;
        Generation = replacement.Generation;
        var old = Interlocked.Exchange(ref _active, replacement);
        Volatile.Write(ref _openFailure, null);
        return old;
    }
}
