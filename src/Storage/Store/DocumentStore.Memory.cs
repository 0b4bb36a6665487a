namespace Indexing.Storage;

// What RocksDB holds in memory and how the caches serve reads, as callers see it; the figures are
// StoreStatistics'.
internal sealed partial class DocumentStore
{
    /// <summary>RocksDB's memory and cache figures now. Cheap (property reads and one statistics text); call it every second if need be.</summary>
    public StoreMemory GetMemory()
    {
        _gate.Enter(this);
        try
        {
            return _statistics.Memory();
        }
        finally
        {
            _gate.Exit();
        }
    }
}
