using System.Net;
using System.Net.ServerSentEvents;
using System.Net.Sockets;
using System.Text;
using Indexing.Server.Hosting;

namespace Indexing.Server.Tests;

/// <summary>
/// The HTTP surface against pages and clients that mean harm or behave badly: cross-site writes,
/// DNS rebinding, foreign content types, oversized and trickled bodies, too many connections or
/// event streams.
/// </summary>
public sealed class HostileClientTests
{
    private const string BulkLine = """{"id": "orders/evil", "doc": {"a": 1}}""";
    private static readonly TimeSpan _hangGuard = TimeSpan.FromSeconds(60);

    [Theory]
    [InlineData("text/plain")]
    [InlineData("application/x-www-form-urlencoded")]
    [InlineData("multipart/form-data; boundary=x")]
    public async Task Bulk_SentWithAFormsContentType_415AndNothingStored(string contentType)
    {
        await using var server = await RunningServer.StartAsync();

        using var content = new StringContent(BulkLine + "\n");
        content.Headers.ContentType = System.Net.Http.Headers.MediaTypeHeaderValue.Parse(contentType);
        using var response = await server.Client.PostAsync("/docs/bulk", content);

        await DocumentEndpointTests.AssertProblem(response, HttpStatusCode.UnsupportedMediaType, "POST /docs/bulk takes application/x-ndjson");
        Assert.Null(server.Store.Get("orders/evil"));
        Assert.Equal(0, server.Store.LastEtag);
    }

    public static TheoryData<string, string, string?, string?> Writes => new()
    {
        { "POST", "/docs/bulk", "application/x-ndjson", BulkLine + "\n" },
        { "PUT", "/docs/orders/evil", "application/json", """{"a": 1}""" },
        { "DELETE", "/docs/orders/1", null, null },
        { "PUT", "/indexes/evil", "application/json", """{"name": "evil", "collection": "orders", "fields": [{"name": "a", "path": "a", "type": "long"}]}""" },
        { "POST", "/indexes/orders-by-a/rebuild", null, null },
        { "PUT", "/admin/prefetch/limits", "application/json", """{"maxConcurrency": 1}""" },
    };

    [Theory]
    [MemberData(nameof(Writes))]
    public async Task Write_FromAPageOfAnotherOrigin_403AndNothingChanges(string method, string path, string? contentType, string? body)
    {
        await using var server = await RunningServer.StartAsync();
        server.Store.Put("orders/1", """{"a": 1}""");
        var etag = server.Store.LastEtag;

        foreach (var (header, value) in new[] { ("Origin", "http://evil.example"), ("Origin", "null"), ("Sec-Fetch-Site", "cross-site"), ("Sec-Fetch-Site", "same-site") })
        {
            using var request = Request(method, path, contentType, body);
            request.Headers.Add(header, value);
            using var response = await server.Client.SendAsync(request);

            var problem = await DocumentEndpointTests.AssertProblem(response, HttpStatusCode.Forbidden, $"{method} {path} was sent by a page");
            Assert.Equal("Cross-site request refused", problem.GetProperty("title").GetString());
        }

        Assert.Equal(etag, server.Store.LastEtag);
        Assert.NotNull(server.Store.Get("orders/1"));
        Assert.Empty(server.Host.Engine.Indexes.Names);
    }

    [Fact]
    public async Task Write_FromTheServersOwnPageOrWithoutOrigin_Accepted()
    {
        await using var server = await RunningServer.StartAsync();
        var own = server.Host.BaseAddress.GetLeftPart(UriPartial.Authority);

        using (var fromPage = Request("PUT", "/docs/orders/1", "application/json", """{"a": 1}"""))
        {
            fromPage.Headers.Add("Origin", own);
            fromPage.Headers.Add("Sec-Fetch-Site", "same-origin");
            using var response = await server.Client.SendAsync(fromPage);
            Assert.Equal(HttpStatusCode.Created, response.StatusCode);
        }

        using (var fromCurl = Request("PUT", "/docs/orders/2", "application/json; charset=utf-8", """{"a": 2}"""))
        {
            using var response = await server.Client.SendAsync(fromCurl);
            Assert.Equal(HttpStatusCode.Created, response.StatusCode);
        }
    }

    [Theory]
    [InlineData("PUT", "/docs/orders/1", "text/plain", "takes application/json, not text/plain")]
    [InlineData("PUT", "/docs/orders/1", null, "has no Content-Type; send the body as application/json (curl: -H 'Content-Type: application/json')")]
    [InlineData("POST", "/docs/bulk", null, "has no Content-Type; send the body as application/x-ndjson")]
    [InlineData("PUT", "/indexes/by-a", "application/x-www-form-urlencoded", "takes application/json")]
    [InlineData("PUT", "/admin/prefetch/limits", "text/plain", "takes application/json")]
    [InlineData("POST", "/indexes/by-a/rebuild", "text/plain", "takes no body, but one was sent as text/plain")]
    [InlineData("PUT", "/docs/orders/1", "application/json; charset=iso-8859-1", "takes UTF-8 application/json, not charset iso-8859-1")]
    public async Task Body_OfAnotherContentType_415NamingWhatToSend(string method, string path, string? contentType, string expected)
    {
        await using var server = await RunningServer.StartAsync();

        using var request = Request(method, path, contentType, """{"a": 1}""");
        using var response = await server.Client.SendAsync(request);

        await DocumentEndpointTests.AssertProblem(response, HttpStatusCode.UnsupportedMediaType, expected);
        Assert.Equal(0, server.Store.LastEtag);
    }

    [Theory]
    [InlineData("evil.example")]
    [InlineData("attacker.test:5080")]
    public async Task Request_ForAnotherHostName_RefusedSoDnsRebindingCannotReachTheApi(string host)
    {
        await using var server = await RunningServer.StartAsync();
        server.Store.Put("orders/1", """{"a": 1}""");

        using var rebound = new HttpRequestMessage(HttpMethod.Get, "/docs/orders/1");
        rebound.Headers.Host = host;
        using var refused = await server.Client.SendAsync(rebound);
        Assert.Equal(HttpStatusCode.BadRequest, refused.StatusCode);
        Assert.DoesNotContain("\"a\"", await refused.Content.ReadAsStringAsync(), StringComparison.Ordinal);

        foreach (var own in new[] { "localhost", "127.0.0.1", $"localhost:{server.Host.BaseAddress.Port}" })
        {
            using var request = new HttpRequestMessage(HttpMethod.Get, "/docs/orders/1");
            request.Headers.Host = own;
            using var response = await server.Client.SendAsync(request);
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        }
    }

    [Fact]
    public async Task Body_OverItsEndpointsLimit_413WhileLargerBodiesGoWhereTheyBelong()
    {
        await using var server = await RunningServer.StartAsync();
        var padded = "{\"maxConcurrency\": 1" + new string(' ', 100_000) + "}";

        using var limits = await server.Client.PutAsync("/admin/prefetch/limits", RunningServer.Json(padded));
        await DocumentEndpointTests.AssertProblem(limits, HttpStatusCode.RequestEntityTooLarge, "over the 64 KiB a small JSON request may have");

        // A document of 100 KB is within the document limit (64 MiB by default).
        using var document = await server.Client.PutAsync("/docs/orders/1", RunningServer.Json("{\"pad\": \"" + new string('p', 100_000) + "\"}"));
        Assert.Equal(HttpStatusCode.Created, document.StatusCode);
    }

    // Kestrel's minimum request body data rate (240 bytes/s after a 5 s grace) is kept: a client
    // sending a few bytes a second is cut off rather than holding a connection and a request.
    [Fact]
    public async Task Body_Trickled_CutOffByKestrelsMinimumDataRateAndNothingStored()
    {
        await using var server = await RunningServer.StartAsync();
        using var timeout = new CancellationTokenSource(_hangGuard);
        using var socket = await ConnectAsync(server, timeout.Token);
        var stream = new NetworkStream(socket);
        await stream.WriteAsync(Encoding.ASCII.GetBytes(
            $"PUT /docs/orders/slow HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{{\"a\": \""), timeout.Token);

        var cutOff = false;
        var sent = 0;
        while (!cutOff && sent < 99_000)
        {
            try
            {
                await stream.WriteAsync("x"u8.ToArray(), timeout.Token);
                sent++;
                cutOff = socket.Poll(0, SelectMode.SelectRead); // an answer or the close arrived
            }
            catch (IOException)
            {
                cutOff = true;
            }

            await Task.Delay(100, timeout.Token);
        }

        Assert.True(cutOff, $"sent {sent} bytes at 10 bytes/s and the server still waits");
        var answer = await ReadAvailableAsync(stream, timeout.Token);
        Assert.True(answer.Length == 0 || answer.StartsWith("HTTP/1.1 408", StringComparison.Ordinal), answer);
        Assert.Null(server.Store.Get("orders/slow"));
    }

    [Fact]
    public async Task Connections_PastMaxConnections_ClosedAtOnceUntilOneCloses()
    {
        await using var server = await RunningServer.StartAsync(new Dictionary<string, string?>
        {
            [ServerOptions.MaxConnectionsSetting] = "3",
            [ServerOptions.MaxEventStreamsSetting] = "1",
        });
        using var timeout = new CancellationTokenSource(_hangGuard);
        var open = new List<Socket>();
        try
        {
            for (var i = 0; i < 3; i++)
            {
                var socket = await ConnectAsync(server, timeout.Token);
                open.Add(socket);
                Assert.StartsWith("HTTP/1.1 404", await GetAsync(socket, "/docs/orders/none", timeout.Token), StringComparison.Ordinal);
            }

            using (var fourth = await ConnectAsync(server, timeout.Token))
            {
                Assert.Equal(string.Empty, await GetAsync(fourth, "/docs/orders/none", timeout.Token));
            }

            open[0].Dispose();
            open.RemoveAt(0);
            string answer;
            do
            {
                await Task.Delay(50, timeout.Token);
                using var next = await ConnectAsync(server, timeout.Token);
                answer = await GetAsync(next, "/docs/orders/none", timeout.Token);
            }
            while (answer.Length == 0);

            Assert.StartsWith("HTTP/1.1 404", answer, StringComparison.Ordinal);
        }
        finally
        {
            open.ForEach(s => s.Dispose());
        }
    }

    [Fact]
    public async Task EventStreams_PastMaxEventStreams_429WithRetryAfter()
    {
        await using var server = await RunningServer.StartAsync(new Dictionary<string, string?> { [ServerOptions.MaxEventStreamsSetting] = "2" });
        using var timeout = new CancellationTokenSource(_hangGuard);
        var streams = new List<HttpResponseMessage>();
        try
        {
            for (var i = 0; i < 2; i++)
            {
                var response = await server.Client.GetAsync("/admin/prefetch/stream", HttpCompletionOption.ResponseHeadersRead, timeout.Token);
                streams.Add(response);
                Assert.Equal(HttpStatusCode.OK, response.StatusCode);
                var stream = await response.Content.ReadAsStreamAsync(timeout.Token);
                await using var events = SseParser.Create(stream).EnumerateAsync(timeout.Token).GetAsyncEnumerator(timeout.Token);
                Assert.True(await events.MoveNextAsync());
            }

            using (var third = await server.Client.GetAsync("/admin/prefetch/stream", HttpCompletionOption.ResponseHeadersRead, timeout.Token))
            {
                // Before reading the body: an accepted stream would never end.
                Assert.Equal(HttpStatusCode.TooManyRequests, third.StatusCode);
                var problem = await DocumentEndpointTests.AssertProblem(third, HttpStatusCode.TooManyRequests, "2 admin event streams are open");
                Assert.Contains("Server:MaxEventStreams", problem.GetProperty("detail").GetString(), StringComparison.Ordinal);
                Assert.Equal("10", third.Headers.GetValues("Retry-After").Single());
            }

            streams[0].Dispose();
            streams.RemoveAt(0);
            HttpStatusCode status;
            do
            {
                await Task.Delay(50, timeout.Token);
                using var again = await server.Client.GetAsync("/admin/prefetch/stream", HttpCompletionOption.ResponseHeadersRead, timeout.Token);
                status = again.StatusCode;
            }
            while (status == HttpStatusCode.TooManyRequests);

            Assert.Equal(HttpStatusCode.OK, status);
        }
        finally
        {
            streams.ForEach(s => s.Dispose());
        }
    }

    private static HttpRequestMessage Request(string method, string path, string? contentType, string? body)
    {
        var request = new HttpRequestMessage(new HttpMethod(method), path);
        if (body is not null)
        {
            request.Content = new ByteArrayContent(Encoding.UTF8.GetBytes(body));
            if (contentType is not null)
            {
                request.Content.Headers.ContentType = System.Net.Http.Headers.MediaTypeHeaderValue.Parse(contentType);
            }
        }

        return request;
    }

    private static async Task<Socket> ConnectAsync(RunningServer server, CancellationToken cancellationToken)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(IPAddress.Loopback, server.Host.BaseAddress.Port, cancellationToken);
        return socket;
    }

    // One keep-alive GET; the response's head and body as text, or "" when the server closed the connection instead.
    private static async Task<string> GetAsync(Socket socket, string path, CancellationToken cancellationToken)
    {
        var stream = new NetworkStream(socket);
        try
        {
            await stream.WriteAsync(Encoding.ASCII.GetBytes($"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"), cancellationToken);
        }
        catch (IOException)
        {
            return string.Empty;
        }

        return await ReadAvailableAsync(stream, cancellationToken);
    }

    // What the server sends until it pauses for 200 ms or closes; "" when it closed (or reset) at once.
    private static async Task<string> ReadAvailableAsync(NetworkStream stream, CancellationToken cancellationToken)
    {
        var text = new StringBuilder();
        var buffer = new byte[16 << 10];
        while (true)
        {
            using var pause = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
            if (text.Length > 0)
            {
                pause.CancelAfter(TimeSpan.FromMilliseconds(200));
            }

            int read;
            try
            {
                read = await stream.ReadAsync(buffer, pause.Token);
            }
            catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
            {
                return text.ToString();
            }
            catch (IOException)
            {
                return text.ToString();
            }

            if (read == 0)
            {
                return text.ToString();
            }

            text.Append(Encoding.ASCII.GetString(buffer, 0, read));
        }
    }
}
