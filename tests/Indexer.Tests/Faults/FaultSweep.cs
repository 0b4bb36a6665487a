using Indexing.Datasets;
using Indexing.Indexer.Tests.Index;
using Indexing.Indexer.Tests.SideBySide;
using Indexing.Storage;

using Lucene.Net.Index;
using Lucene.Net.Store;

namespace Indexing.Indexer.Tests.Faults;

// One point of the fault sweep (FaultSweepTests): a small first build, a side-by-side rebuild
// while a writer puts and deletes, then following under the writer, with every file operation of
// the index directories and the catalog counted by one FaultPlan, and the chosen ones failing as a
// full disk would. Then the fault clears, the engine closes (committing what it believes) and is
// opened again, recovers (a retried definition, a resumed rebuild, following), and is judged:
// - every commit the catalog names claims nothing its index lacks (before and after recovery):
//   a complete commit at etag E holds every change at or below E as the store has it; an
//   interrupted build's commit with key K and snapshot S holds every document at or below K that
//   has not changed since S;
// - every acknowledged write is in the store, and verify finds nothing missing, extra or stale;
// - the serving generation answers a query over the whole collection with every live document.
internal static class FaultSweep
{
    private const string Name = "orders";
    private static readonly TimeSpan HangGuard = TimeSpan.FromMinutes(1);

    /// <summary>What one run saw: the operations its faulted part counted, the faults that fired, and every broken rule (none: the point passed).</summary>
    public sealed record Outcome(FaultPlan.Counts Operations, int Faults, IReadOnlyList<string> Problems);

    public static async Task<Outcome> RunAsync(int documents, int writes, params long[] failAt)
    {
        using var env = new ManagerEnvironment(documents, DatasetShape.Uniform);
        var plan = new FaultPlan();
        plan.FailAt(failAt);
        var problems = new List<string>();
        var options = Options(plan);
        var written = new Dictionary<string, string?>(StringComparer.Ordinal); // id -> acknowledged body (null: deleted)

        // The faulted run: any call may fail; what matters is what is left behind. Once a fault
        // fired, the run stops at the end of that phase and the engine restarts.
        var manager = env.OpenManager(options);
        Try(() => manager.CreateOrUpdate(ManagerEnvironment.V1));
        await WaitForRebuildAsync(manager);
        if (plan.Failures == 0)
        {
            var writer = Task.Run(() => Write(env.Store, written, writes / 2, seed: 17));
            Try(() => manager.CreateOrUpdate(ManagerEnvironment.V2));
            await WaitForRebuildAsync(manager);
            await writer.WaitAsync(HangGuard);
        }

        if (plan.Failures == 0)
        {
            // Following under the writer.
            await Task.Run(() => Write(env.Store, written, writes - (writes / 2), seed: 18)).WaitAsync(HangGuard);
            await Task.Delay(100);
        }

        var faults = plan.Failures;
        var operations = plan.Count();
        plan.Clear();
        await CloseAsync(env, problems);
        CheckCommits(env, problems, "after the faulted run");

        // Recovery: the engine opens again, with the disk healthy.
        manager = env.OpenManager(options);
        if (!manager.Names.Contains(Name))
        {
            manager.CreateOrUpdate(ManagerEnvironment.V1); // the definition never reached the catalog: define it again
        }

        await WaitForRebuildAsync(manager);
        CheckServing(env, manager, written, problems);
        await CloseAsync(env, problems);
        CheckCommits(env, problems, "after recovery");
        return new Outcome(operations, faults, problems);
    }

    private static IndexManagerOptions Options(FaultPlan plan) => ManagerEnvironment.FastOptions() with
    {
        Index = new IndexOptions
        {
            RefreshInterval = TimeSpan.FromMilliseconds(50),
            FollowPollInterval = TimeSpan.FromMilliseconds(10),
            CommitInterval = TimeSpan.FromMilliseconds(200),
            BulkCommitInterval = TimeSpan.FromMilliseconds(100),
            IndexingThreads = 2,
            SwapLagEtags = 5,
            DrainTimeout = TimeSpan.FromSeconds(1),
            OpenSink = (path, definition, opened) => LuceneIndexSink.Open(path, definition, opened, at => new FaultyDirectory(FSDirectory.Open(at), plan)),
        },
        CatalogFileHook = (step, path) => plan.Before(step switch
        {
            AtomicFileStep.Write => FileOperation.Write,
            AtomicFileStep.Rename => FileOperation.Rename,
            _ => FileOperation.Sync,
        }, $"{Path.GetFileName(path)} ({step})"),
    };

    private static void Try(Action action)
    {
        try
        {
            action();
        }
        catch (Exception e) when (e is IndexException or IOException or InvalidOperationException)
        {
            // The fault surfacing where it happened: expected.
        }
    }

    private static async Task WaitForRebuildAsync(IndexManager manager)
    {
        if (manager.Names.Contains(Name))
        {
            await manager.WaitForRebuildAsync(Name).WaitAsync(HangGuard);
        }
    }

    private static async Task CloseAsync(ManagerEnvironment env, List<string> problems)
    {
        try
        {
            await env.CloseManagerAsync();
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            problems.Add($"closing the manager threw {e.GetType().Name}: {e.Message}");
        }
    }

    // Seeded puts (new and existing ids) and deletes, a few milliseconds apart, each recorded once
    // the store acknowledged it.
    private static void Write(DocumentStore store, Dictionary<string, string?> written, int count, int seed)
    {
        var random = new Random(seed);
        var first = seed * 1000;
        var existing = store.ScanMetadata(Name).Select(m => m.Id).ToList();
        for (var i = 0; i < count; i++)
        {
            var roll = random.Next(10);
            if (roll < 3 && existing.Count > 0)
            {
                var id = existing[random.Next(existing.Count)];
                store.Delete(id);
                existing.Remove(id);
                lock (written)
                {
                    written[id] = null;
                }
            }
            else
            {
                var id = roll < 6 && existing.Count > 0 ? existing[random.Next(existing.Count)] : $"orders/w{first + i:D6}";
                var body = $$"""{"customer":{"name":"Writer {{i}}"},"status":"written","total":{{i}}.5,"itemCount":{{i % 7}},"paid":true}""";
                store.Put(id, body);
                if (!existing.Contains(id))
                {
                    existing.Add(id);
                }

                lock (written)
                {
                    written[id] = body;
                }
            }

            Thread.Sleep(3);
        }
    }

    // After recovery: the store has every acknowledged write; the serving generation holds the store.
    private static void CheckServing(ManagerEnvironment env, IndexManager manager, Dictionary<string, string?> written, List<string> problems)
    {
        foreach (var (id, body) in written)
        {
            var stored = env.Store.Get(id);
            if (body is null ? stored is not null : stored is null || System.Text.Encoding.UTF8.GetString(stored.Value.Body) != body)
            {
                problems.Add($"acknowledged write of {id} is not in the store as written");
            }
        }

        if (!manager.Names.Contains(Name))
        {
            problems.Add("the index is not defined after recovery");
            return;
        }

        try
        {
            var report = manager.Verify(Name);
            if (!report.IsConsistent)
            {
                problems.Add($"verify: {report}");
            }

            var live = env.LiveDocuments();
            var hits = manager.Query(Name, new IndexQuery("*:*") { Take = 1 }).TotalHits;
            if (hits != live)
            {
                problems.Add($"a query over the whole collection answers {hits} of {live} live documents");
            }
        }
        catch (Exception e) when (e is IndexException or InvalidOperationException)
        {
            problems.Add($"the serving generation failed after recovery: {e.GetType().Name}: {e.Message}");
        }
    }

    // Every generation the catalog names (serving, or being rebuilt) claims nothing it lacks.
    private static void CheckCommits(ManagerEnvironment env, List<string> problems, string when)
    {
        IndexCatalog catalog;
        try
        {
            catalog = IndexCatalog.Load(env.IndexRoot);
        }
        catch (InvalidDataException e)
        {
            problems.Add($"{when}: the catalog cannot be read: {e.Message}");
            return;
        }

        if (catalog.State.Indexes.GetValueOrDefault(Name) is not { } entry)
        {
            return;
        }

        var named = new List<(int Generation, string Role)>();
        if (entry.ActiveGeneration > 0)
        {
            named.Add((entry.ActiveGeneration, "serving"));
        }

        if (entry.Rebuild is { } intent && intent.Generation != entry.ActiveGeneration)
        {
            named.Add((intent.Generation, "rebuilt"));
        }

        foreach (var (generation, role) in named)
        {
            var directory = catalog.GenerationDirectory(Name, generation);
            var checkpoint = System.IO.Directory.Exists(directory) ? LuceneIndexSink.ReadLastCommit(directory) : null;
            if (checkpoint is not { } commit)
            {
                if (role == "serving" && entry.Rebuild?.Generation != generation)
                {
                    problems.Add($"{when}: the catalog names generation {generation} as serving, and it holds no commit");
                }

                continue;
            }

            var held = ReadEntries(directory);
            var label = $"{when}: generation {generation} ({role})";
            if (commit.BuildSnapshotEtag is { } snapshot)
            {
                if (commit.BuildIndexedThrough is { } key)
                {
                    foreach (var meta in env.Store.ScanMetadata(Name))
                    {
                        if (meta.Etag <= snapshot && DocumentIds.CompareKeyOrder(meta.Id, key) <= 0 && !held.ContainsKey(meta.Id))
                        {
                            problems.Add($"{label}: its build commit says it holds every document through {key} of snapshot {snapshot}, and lacks {meta.Id}");
                            break;
                        }
                    }
                }

                continue;
            }

            // Complete at etag E: every change at or below E is in it as the store has it.
            foreach (var change in env.Store.ReadChanges(0, int.MaxValue))
            {
                if (change.Etag > commit.Etag)
                {
                    break;
                }

                if (!DocumentIds.GetCollection(change.Id).SequenceEqual(Name))
                {
                    continue;
                }

                var found = held.TryGetValue(change.Id, out var etag);
                if (change.Deleted ? found : !found || etag != change.Etag)
                {
                    problems.Add($"{label}: its commit says it holds every change through etag {commit.Etag}, but {change.Id} is {(found ? $"at etag {etag}" : "missing")} (the store's change: {(change.Deleted ? "deleted" : "put")} at {change.Etag})");
                    break;
                }
            }
        }
    }

    // The last commit's live entries: id -> etag.
    private static Dictionary<string, long> ReadEntries(string directory)
    {
        var entries = new Dictionary<string, long>(StringComparer.Ordinal);
        using var files = FSDirectory.Open(directory);
        using var reader = DirectoryReader.Open(files);
        foreach (var leaf in reader.Leaves)
        {
            var atomic = leaf.AtomicReader;
            var live = atomic.LiveDocs;
            var etags = atomic.GetNumericDocValues(IndexFieldNames.Etag);
            for (var doc = 0; doc < atomic.MaxDoc; doc++)
            {
                if (live is null || live.Get(doc))
                {
                    entries[atomic.Document(doc).Get(IndexFieldNames.Id)] = etags?.Get(doc) ?? 0;
                }
            }
        }

        return entries;
    }
}
