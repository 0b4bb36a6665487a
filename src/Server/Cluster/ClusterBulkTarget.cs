using System.Diagnostics.CodeAnalysis;
using System.Net.Http.Headers;
using System.Text;
using System.Text.Json;
using Indexing.Cluster;
using Indexing.Engine;
using Indexing.Server.Loading;
using Indexing.Storage;

namespace Indexing.Server.Cluster;

/// <summary>
/// A bulk load's target in a cluster: each chunk the load gathers is split by owner, and each owner's
/// part is sent to its <c>/shard/docs/bulk</c> as NDJSON (this node's own part too, through its write
/// gate). The documents are judged by this node's rules first (every node runs the same settings).
/// </summary>
internal sealed class ClusterBulkTarget(ClusterNode node, ShardClient shards, IndexingEngine engine) : IBulkTarget
{
    private static readonly MediaTypeHeaderValue NdJson = new("application/x-ndjson");

    /// <summary>Documents the owners stored so far.</summary>
    public long Stored { get; private set; }

    public long MaxDocumentBytes => engine.Options.Storage.MaxDocumentBytes;

    public bool IsValid(string id, ReadOnlySpan<byte> body, [NotNullWhen(false)] out DocumentValidationError? error) =>
        engine.IsValidDocument(id, body, out error);

    // Etags are each shard's own: the answer's first and last etags are 0 in a cluster.
    public BulkWriteResult PutMany(IReadOnlyList<DocumentWrite> documents, CancellationToken cancellationToken)
    {
        var started = DateTimeOffset.UtcNow;
        long bytes = 0;
        // Every owner is checked before anything is sent, so a chunk with a down owner writes nothing.
        var parts = documents.GroupBy(d => node.OwnerOf(d.Id)).Select(g => (Owner: g.Key, Url: ShardClient.UrlOf(node, g.Key, "owns documents of this load"), Documents: g.ToList())).ToList();
        foreach (var (owner, url, part) in parts)
        {
            using var body = new MemoryStream();
            using (var json = new Utf8JsonWriter(body))
            {
                foreach (var document in part)
                {
                    json.Reset(body);
                    json.WriteStartObject();
                    json.WriteString("id", document.Id);
                    json.WritePropertyName("doc");
                    json.WriteRawValue(document.Body.Span, skipInputValidation: true);
                    json.WriteEndObject();
                    json.Flush();
                    body.WriteByte((byte)'\n');
                    bytes += document.Body.Length;
                }
            }

            body.Position = 0;
            using var request = shards.Request(HttpMethod.Post, url, "shard/docs/bulk");
            request.Content = new StreamContent(body);
            request.Content.Headers.ContentType = NdJson;
            using var response = shards.Send(request, owner, cancellationToken);
            var answer = response.Content.ReadAsStringAsync(cancellationToken).GetAwaiter().GetResult();
            if (!response.IsSuccessStatusCode)
            {
                var detail = TryDetail(answer) ?? answer;
                throw new ShardRefusedException((int)response.StatusCode, $"node {MessageText.Quote(owner)} refused its part of a chunk ({(int)response.StatusCode}): {detail}");
            }

            using var result = JsonDocument.Parse(answer);
            var stored = result.RootElement.GetProperty("stored").GetInt64();
            Stored += stored;
            if (stored != part.Count)
            {
                throw new ShardRefusedException(Microsoft.AspNetCore.Http.StatusCodes.Status500InternalServerError, $"node {MessageText.Quote(owner)} stored {stored} of the {part.Count} documents sent to it: {answer}");
            }
        }

        return new BulkWriteResult(documents.Count, bytes, 0, 0, DateTimeOffset.UtcNow - started);
    }

    private static string? TryDetail(string problem)
    {
        try
        {
            using var json = JsonDocument.Parse(problem);
            return json.RootElement.TryGetProperty("detail", out var detail) ? detail.GetString() : null;
        }
        catch (JsonException)
        {
            return null;
        }
    }
}
