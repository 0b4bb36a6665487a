using Lucene.Net.Store;

using LuceneDirectory = Lucene.Net.Store.Directory;

namespace Indexing.Indexer.Tests.Index;

// A Lucene directory over a real one that fails on demand, as a full or failing disk would. Every
// file operation (create, each write call, fsync, delete) goes through a FaultPlan, which counts it
// and may fail it; several directories (an index's generations) can share one plan with the catalog.
// Kept in the tests (Lucene.Net's test framework, which has MockDirectoryWrapper, is not a
// dependency of this project).
internal sealed class FaultyDirectory(LuceneDirectory inner, FaultPlan? plan = null) : FilterDirectory(inner)
{
    /// <summary>The plan every operation goes through.</summary>
    public FaultPlan Plan { get; } = plan ?? new FaultPlan();

    /// <summary>Faults that fired so far.</summary>
    public int Failures => Plan.Failures;

    public override IndexOutput CreateOutput(string name, IOContext context)
    {
        Plan.Before(FileOperation.Create, name);
        return new CountingOutput(base.CreateOutput(name, context), name, this);
    }

    public override void Sync(ICollection<string> names)
    {
        Plan.Before(FileOperation.Sync, string.Join(",", names));
        base.Sync(names);
    }

    public override void DeleteFile(string name)
    {
        Plan.Before(FileOperation.Delete, name);
        base.DeleteFile(name);
    }

    // Every write call goes through the plan.
    private sealed class CountingOutput(IndexOutput inner, string name, FaultyDirectory owner) : IndexOutput
    {
        public override long Position => inner.Position;

        public override long Checksum => inner.Checksum;

        public override long Length => inner.Length;

        public override void WriteByte(byte b)
        {
            Check();
            inner.WriteByte(b);
        }

        public override void WriteBytes(byte[] b, int offset, int length)
        {
            Check();
            inner.WriteBytes(b, offset, length);
        }

        public override void Flush() => inner.Flush();

        [Obsolete("Seek is obsolete in Lucene.Net; writers never call it.")]
        public override void Seek(long pos) => inner.Seek(pos);

        protected override void Dispose(bool disposing)
        {
            if (disposing)
            {
                inner.Dispose();
            }
        }

        private void Check() => owner.Plan.Before(FileOperation.Write, name);
    }
}
