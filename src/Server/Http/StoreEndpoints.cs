using Indexing.Engine;
using Indexing.Storage;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Routing;

namespace Indexing.Server.Http;

/// <summary>
/// The store's status on the admin surface: <c>GET /admin/store</c>, <see cref="StoreStatus"/> as JSON
/// (camelCase): last etag, RocksDB's estimates, open handles, tombstones held and purged with the low
/// watermark that holds them, the effective options and <c>rocksdb.stats</c>.
/// </summary>
internal static class StoreEndpoints
{
    public static void Map(WebApplication app, IndexingEngine engine, FailureTexts failures) =>
        app.MapGet("/admin/store", (HttpContext context) => TypedResults.Ok(failures.Store(engine.GetStoreStatus(), context)));
}
