using Indexing.Benchmarks.Rebuild;

namespace Indexing.Benchmarks.Controller;

/// <summary>The rebuild job and columns, plus the ratios to the bound and to BestFixed's MB/s.</summary>
internal sealed class ControllerTableConfig : RebuildConfig
{
    public ControllerTableConfig() => AddColumn(new RatioToBoundColumn(), RebuildColumns.VersusBestFixed);
}
