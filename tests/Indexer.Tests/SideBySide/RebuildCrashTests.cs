using System.Globalization;
using System.Text;

using Xunit.Abstractions;

namespace Indexing.Indexer.Tests.SideBySide;

// A real process runs a rebuild and is killed (SIGKILL) at each rebuild point, in every phase
// and inside the swap, with and without a writer putting and deleting documents all along. After
// each kill, reopening must serve queries from a complete index at once, every acknowledged write
// must be in the store as acknowledged, and the rebuild must complete (or have completed) with a
// consistent result.
[Trait("Category", "Crash")]
public sealed class RebuildCrashTests(ITestOutputHelper log)
{
    private const int Documents = 1200;

    public static TheoryData<string, bool> Points()
    {
        var points = new TheoryData<string, bool>();
        foreach (var point in Enum.GetNames<RebuildPoint>())
        {
            points.Add(point, false);
            points.Add(point, true);
        }

        return points;
    }

    [Theory]
    [MemberData(nameof(Points))]
    public async Task KilledAtPoint_ReopenServesACompleteIndex_AndTheRebuildCompletes(string pointName, bool writer)
    {
        using var env = new ManagerEnvironment(documents: Documents);
        var definitionFile = await env.BuildV1ForTheCrashHostAsync();

        var output = await RunHostUntilKilledAsync(env, pointName, definitionFile, writer);

        env.ReopenStoreAfterClose();
        var written = WrittenState.Check(env, output);
        Assert.True(!writer || written.Acknowledged > 0, "the writer acknowledged no write before the kill");
        log.WriteLine($"killed at {pointName}: {written.Acknowledged} acknowledged writes, {written.Live} written documents live");
        var manager = env.OpenManager();
        // At once, before any rebuild work resumes: a complete index serves (old or new generation).
        Assert.Equal(Documents, manager.Query("orders", new IndexQuery("*:* -status:written") { Take = 1 }).TotalHits);
        if (manager.GetRebuild("orders") is not null)
        {
            var resumed = await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");
            Assert.Equal(RebuildPhase.Done, resumed.Phase);
        }

        var summary = manager.GetSummary("orders");
        Assert.Equal(2, summary.Generation);
        Assert.Equal(ManagerEnvironment.V2.DefinitionHash, summary.DefinitionHash);
        Assert.Equal(["g000002"], env.GenerationDirectories("orders"));
        var report = manager.Verify("orders");
        Assert.True(report.IsConsistent, report.ToString());
        Assert.Equal(env.LiveDocuments(), report.IndexDocuments);
        Assert.Equal(Documents + written.Live, report.IndexDocuments);

        // The store goes on from the highest etag it issued: no etag is issued twice.
        Assert.True(env.Store.Put("orders/after-restart", "{}") > written.HighestEtag);
    }

    private static Task<List<string>> RunHostUntilKilledAsync(ManagerEnvironment env, string pointName, string definitionFile, bool writer)
    {
        List<string> arguments = [env.StoreDirectory, env.IndexRoot, pointName, definitionFile];
        if (writer)
        {
            arguments.Add("writer");
        }

        return CrashHostProcess.RunUntilKilledAsync(arguments, $"AT {pointName}");
    }

    // What the crash host's writer printed, checked against the reopened store: every acknowledged
    // put is there with its etag and body unless a delete of it may have run; every acknowledged
    // delete is gone; the one write in flight at the kill may or may not have happened.
    internal sealed record WrittenState(int Acknowledged, int Live, long HighestEtag)
    {
        public static WrittenState Check(ManagerEnvironment env, List<string> output)
        {
            var putEtags = new Dictionary<string, long>(StringComparer.Ordinal);
            var deleting = new HashSet<string>(StringComparer.Ordinal);
            var deleted = new HashSet<string>(StringComparer.Ordinal);
            var putting = new HashSet<string>(StringComparer.Ordinal);
            var etags = new List<long>();
            foreach (var line in output)
            {
                var parts = line.Split(' ');
                switch (parts[0])
                {
                    case "PUTTING":
                        putting.Add(parts[1]);
                        break;
                    case "PUT":
                        putEtags.Add(parts[1], long.Parse(parts[2], CultureInfo.InvariantCulture));
                        etags.Add(putEtags[parts[1]]);
                        break;
                    case "DELETING":
                        deleting.Add(parts[1]);
                        break;
                    case "DELETED":
                        deleted.Add(parts[1]);
                        etags.Add(long.Parse(parts[2], CultureInfo.InvariantCulture));
                        break;
                }
            }

            Assert.Equal(etags.Count, etags.Distinct().Count());
            var live = 0;
            foreach (var id in putting)
            {
                var stored = env.Store.Get(id);
                var acknowledged = putEtags.TryGetValue(id, out var etag);
                if (deleted.Contains(id))
                {
                    Assert.True(stored is null, $"{id}: its delete was acknowledged, but it is in the store");
                    continue;
                }

                if (stored is not { } document)
                {
                    // Allowed only when the write that would have made it exist, or the delete that
                    // removed it, was in flight at the kill.
                    Assert.True(!acknowledged || deleting.Contains(id), $"{id}: its put was acknowledged at etag {etag}, but it is not in the store");
                    continue;
                }

                live++;
                if (acknowledged)
                {
                    Assert.Equal(etag, document.Etag);
                }

                var n = int.Parse(id["orders/w-".Length..], CultureInfo.InvariantCulture);
                Assert.Equal(
                    $$"""{"customer":{"name":"writer"},"status":"written","total":{{n}},"itemCount":1,"paid":true}""",
                    Encoding.UTF8.GetString(document.Body));
            }

            Assert.True(env.Store.LastEtag >= (etags.Count == 0 ? 0 : etags.Max()), "the store's last etag is below an acknowledged one");
            return new WrittenState(putEtags.Count + deleted.Count, live, env.Store.LastEtag);
        }
    }
}
