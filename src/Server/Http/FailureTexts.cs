using System.Text.Json.Serialization.Metadata;
using Indexing.Indexer;
using Indexing.Storage;
using Microsoft.AspNetCore.Http;

namespace Indexing.Server.Http;

/// <summary>
/// What HTTP clients read of an index's failures. Failure texts (an index's last error and last
/// document failure, a rebuild's error and notes, the last rebuild's error and note, the purger's
/// error) carry the engine's own exception messages, which name files and internals: a request that
/// did not prove the full API key (<see cref="ApiKeyGate.CanSeeDetails"/>; the read-only key does not)
/// gets <see cref="Withheld"/> in their place, while the fields themselves (null or not) still say
/// whether something failed. Requests that may see them get them without the data directory's
/// absolute path: it becomes <c>&lt;data&gt;</c>. The index's directory is left out of the JSON
/// altogether (<see cref="HideDirectories"/>). A loopback server without a key trusts every request,
/// as it trusts them to write.
/// </summary>
internal sealed class FailureTexts
{
    public const string Withheld = "withheld: failure texts are shown to requests with the full API key (Server:ApiKey), not the read-only one";
    private const string DataPlaceholder = "<data>";

    private readonly string _dataDirectory;

    public FailureTexts(string dataDirectory)
    {
        _dataDirectory = Path.TrimEndingDirectorySeparator(Path.GetFullPath(dataDirectory));
    }

    /// <summary>A JSON contract modifier: <see cref="IndexStatus.Directory"/> is never serialized.</summary>
    public static void HideDirectories(JsonTypeInfo type)
    {
        if (type.Type == typeof(IndexStatus) && type.Kind == JsonTypeInfoKind.Object)
        {
            var directory = type.Properties.Single(p => p.Name.Equals(nameof(IndexStatus.Directory), StringComparison.OrdinalIgnoreCase));
            type.Properties.Remove(directory);
        }
    }

    public IndexSummary Summary(IndexSummary summary, HttpContext context) => summary with
    {
        Status = summary.Status with
        {
            LastError = Failure(summary.Status.LastError, context),
            LastDocumentFailure = Failure(summary.Status.LastDocumentFailure, context),
            LastMismatch = Scrub(summary.Status.LastMismatch),
        },
        Rebuild = Progress(summary.Rebuild, context),
        LastRebuild = summary.LastRebuild is { } last ? last with { Error = Failure(last.Error, context), Note = Failure(last.Note, context) } : null,
    };

    // A note is what went wrong without failing the rebuild (a cleanup that failed, a drain that timed
    // out): it quotes exceptions and directories like an error does.
    public RebuildProgress? Progress(RebuildProgress? progress, HttpContext context) =>
        progress is null ? null : progress with { Error = Failure(progress.Error, context), Note = Failure(progress.Note, context), SwapSteps = Scrub(progress.SwapSteps) };

    /// <summary>The store's status as <c>GET /admin/store</c> shows it: its path under <c>&lt;data&gt;</c>, the purger's failure and RocksDB's refusal of writes treated as any failure text.</summary>
    public StoreStatus Store(StoreStatus status, HttpContext context) => status with
    {
        Path = Scrub(status.Path)!,
        TombstonePurgeError = Failure(status.TombstonePurgeError, context),
        WriteError = Failure(status.WriteError, context),
    };

    private string? Failure(string? text, HttpContext context) =>
        text is null ? null : ApiKeyGate.CanSeeDetails(context) ? Scrub(text) : Withheld;

    /// <summary><paramref name="text"/> with the data directory shown as <c>&lt;data&gt;</c>: for messages every client may read (a full store's 507).</summary>
    public string? Scrub(string? text) => text?.Replace(_dataDirectory, DataPlaceholder, StringComparison.Ordinal);
}
