using System.Net;
using System.Net.Http.Headers;
using Indexing.Cluster;

namespace Indexing.Server.Cluster;

/// <summary>
/// Calls from this node to the shard endpoints (<c>/shard/...</c>) of any node, itself included: one
/// pooled HttpClient, the cluster's API key on every call (each node is configured with the same
/// <c>Server:ApiKey</c>), and a down owner turned into <see cref="NodeDownException"/> naming it.
/// </summary>
internal sealed class ShardClient : IDisposable
{
    private const string ApiKeyHeader = "X-Api-Key";

    private readonly HttpClient _http;
    private readonly string? _apiKey;

    public ShardClient(string? apiKey, TimeSpan timeout)
    {
        _apiKey = apiKey;
        _http = new HttpClient(new SocketsHttpHandler
        {
            PooledConnectionLifetime = TimeSpan.FromMinutes(2),
            ConnectTimeout = TimeSpan.FromSeconds(2),
            AutomaticDecompression = DecompressionMethods.None,
        })
        {
            Timeout = timeout,
        };
    }

    /// <summary>The node's URL from its member record; throws <see cref="NodeDownException"/> when it holds no live lease.</summary>
    public static Uri UrlOf(ClusterNode node, string owner, string what)
    {
        if (node.Member(owner) is not { } member)
        {
            throw new NodeDownException(owner, $"node {MessageText.Quote(owner)} {what} and is down (it holds no live lease in etcd); nothing was sent to it.");
        }

        return new Uri(member.Url);
    }

    public HttpRequestMessage Request(HttpMethod method, Uri node, string pathAndQuery)
    {
        var request = new HttpRequestMessage(method, new Uri(node, pathAndQuery));
        if (_apiKey is not null)
        {
            request.Headers.Add(ApiKeyHeader, _apiKey);
        }

        request.Headers.Accept.Add(new MediaTypeWithQualityHeaderValue("application/json"));
        return request;
    }

    /// <summary>Sends; a connection refused or reset, or a timeout, is <see cref="NodeDownException"/> naming <paramref name="owner"/>.</summary>
    public async Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, string owner, HttpCompletionOption completion, CancellationToken cancellationToken)
    {
        try
        {
            return await _http.SendAsync(request, completion, cancellationToken).ConfigureAwait(false);
        }
        catch (HttpRequestException e)
        {
            throw new NodeDownException(owner, $"node {MessageText.Quote(owner)} at {request.RequestUri?.GetLeftPart(UriPartial.Authority)} did not answer ({e.Message}).", e);
        }
        catch (TaskCanceledException e) when (!cancellationToken.IsCancellationRequested)
        {
            throw new NodeDownException(owner, $"node {MessageText.Quote(owner)} at {request.RequestUri?.GetLeftPart(UriPartial.Authority)} did not answer within {_http.Timeout.TotalSeconds:0} s.", e);
        }
    }

    /// <summary>The synchronous <see cref="SendAsync"/>, for the bulk load's synchronous chunk writes.</summary>
    public HttpResponseMessage Send(HttpRequestMessage request, string owner, CancellationToken cancellationToken)
    {
        try
        {
            return _http.Send(request, HttpCompletionOption.ResponseContentRead, cancellationToken);
        }
        catch (HttpRequestException e)
        {
            throw new NodeDownException(owner, $"node {MessageText.Quote(owner)} at {request.RequestUri?.GetLeftPart(UriPartial.Authority)} did not answer ({e.Message}).", e);
        }
        catch (TaskCanceledException e) when (!cancellationToken.IsCancellationRequested)
        {
            throw new NodeDownException(owner, $"node {MessageText.Quote(owner)} at {request.RequestUri?.GetLeftPart(UriPartial.Authority)} did not answer within {_http.Timeout.TotalSeconds:0} s.", e);
        }
    }

    public void Dispose() => _http.Dispose();
}

/// <summary>The node that owns what a request needs is down or did not answer: 503 naming it.</summary>
internal sealed class NodeDownException(string node, string message, Exception? inner = null) : Exception(message, inner)
{
    public string Node { get; } = node;
}
