using System.Net;
using System.Net.Http.Headers;
using Indexing.Server.Hosting;
using Microsoft.Extensions.Configuration;

namespace Indexing.Server.Tests;

public sealed class SecurityAndOptionsTests
{
    private const string Key = "0123456789abcdef-test-key";

    [Fact]
    public async Task Start_AnyAddressWithoutKey_RefusedNamingTheSettings()
    {
        var directory = Path.Combine(Path.GetTempPath(), "indexing-server-tests", Guid.NewGuid().ToString("N"));
        var error = await Assert.ThrowsAsync<ServerConfigurationException>(() => ServerHost.StartAsync(
            directory, [], RunningServer.Defaults(new Dictionary<string, string?> { [ServerOptions.AddressSetting] = "0.0.0.0" }), CancellationToken.None));

        Assert.Contains("Server:Address is 0.0.0.0", error.Message, StringComparison.Ordinal);
        Assert.Contains("Server:ApiKey is not set", error.Message, StringComparison.Ordinal);
        Assert.False(Directory.Exists(directory), "a refused start must not create the store");
    }

    [Fact]
    public async Task Requests_AnyAddressWithKey_WritesAdminAndMetricsNeedTheKeyReadsDoNot()
    {
        await using var server = await RunningServer.StartAsync(new Dictionary<string, string?>
        {
            [ServerOptions.AddressSetting] = "0.0.0.0",
            [ServerOptions.ApiKeySetting] = Key,
        });
        // Kestrel reports 0.0.0.0; talk to it over loopback.
        server.Client.BaseAddress = new UriBuilder(server.Host.BaseAddress) { Host = "127.0.0.1" }.Uri;
        server.Store.Put("orders/1", """{"a": 1}""");

        foreach (var (method, path) in new[] { ("PUT", "/docs/orders/2"), ("DELETE", "/docs/orders/1"), ("POST", "/docs/bulk"), ("GET", "/admin"), ("GET", "/admin/prefetch"), ("GET", "/metrics"), ("PUT", "/admin/prefetch/limits") })
        {
            using var request = new HttpRequestMessage(new HttpMethod(method), path) { Content = method == "GET" ? null : RunningServer.Json("""{"id": "orders/3", "doc": {}}""") };
            using var response = await server.Client.SendAsync(request);
            var problem = await DocumentEndpointTests.AssertProblem(response, HttpStatusCode.Unauthorized, "needs the API key (Server:ApiKey)");
            Assert.Equal(path, problem.GetProperty("detail").GetString()!.Split(' ')[1]);
        }

        using (var wrong = new HttpRequestMessage(HttpMethod.Put, "/docs/orders/2") { Content = RunningServer.Json("{}") })
        {
            wrong.Headers.Add("X-Api-Key", Key + "x");
            using var response = await server.Client.SendAsync(wrong);
            await DocumentEndpointTests.AssertProblem(response, HttpStatusCode.Unauthorized, "is not the configured one");
        }

        Assert.Equal(1, server.Store.LastEtag);
        Assert.NotNull(server.Store.Get("orders/1"));

        using var read = await server.Client.GetAsync("/docs/orders/1");
        Assert.Equal(HttpStatusCode.OK, read.StatusCode);

        using (var withHeader = new HttpRequestMessage(HttpMethod.Put, "/docs/orders/2") { Content = RunningServer.Json("{}") })
        {
            withHeader.Headers.Add("X-Api-Key", Key);
            using var response = await server.Client.SendAsync(withHeader);
            Assert.Equal(HttpStatusCode.Created, response.StatusCode);
        }

        using (var withBearer = new HttpRequestMessage(HttpMethod.Get, "/metrics"))
        {
            withBearer.Headers.Authorization = new AuthenticationHeaderValue("Bearer", Key);
            using var response = await server.Client.SendAsync(withBearer);
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        }
    }

    [Fact]
    public async Task AdminPage_KeyInUrlOnce_CookieOpensTheAdminReadsButNeverWrites()
    {
        await using var server = await RunningServer.StartAsync(new Dictionary<string, string?>
        {
            [ServerOptions.AddressSetting] = "0.0.0.0",
            [ServerOptions.ApiKeySetting] = Key,
        });
        var address = new UriBuilder(server.Host.BaseAddress) { Host = "127.0.0.1" }.Uri;
        var cookies = new CookieContainer();
        using var handler = new HttpClientHandler { CookieContainer = cookies, AllowAutoRedirect = false };
        using var browser = new HttpClient(handler) { BaseAddress = address };

        using (var wrong = await browser.GetAsync("/admin?key=not-the-key-at-all"))
        {
            Assert.Equal(HttpStatusCode.Unauthorized, wrong.StatusCode);
        }

        using (var login = await browser.GetAsync($"/admin?key={Key}"))
        {
            Assert.Equal(HttpStatusCode.Redirect, login.StatusCode);
            Assert.Equal("/admin", login.Headers.Location?.OriginalString);
        }

        using (var page = await browser.GetAsync("/admin/prefetch"))
        {
            Assert.Equal(HttpStatusCode.OK, page.StatusCode);
        }

        using (var metrics = await browser.GetAsync("/metrics"))
        {
            Assert.Equal(HttpStatusCode.Unauthorized, metrics.StatusCode);
        }

        using (var write = await browser.PutAsync("/admin/prefetch/limits", RunningServer.Json("""{"maxConcurrency": 2}""")))
        {
            Assert.Equal(HttpStatusCode.Unauthorized, write.StatusCode);
        }
    }

    public static TheoryData<string, string, string> BadSettings => new()
    {
        { ServerOptions.PortSetting, "80000", "Server:Port is '80000'; it must be a whole number from 0 to 65535" },
        { ServerOptions.PortSetting, "http", "Server:Port is 'http'" },
        { ServerOptions.AddressSetting, "localhost:80", "Server:Address is 'localhost:80', which is not an IP address" },
        { ServerOptions.ApiKeySetting, "s3cr3t", "Server:ApiKey is 6 characters; it must be at least 16" },
        { ServerOptions.ApiKeySetting, "with whitespace inside it", "contains whitespace" },
        { ServerOptions.MaxDocumentBytesSetting, "lots", "Storage:MaxDocumentBytes is 'lots', which is not a size" },
        { ServerOptions.MaxDocumentBytesSetting, "2GiB", "Storage:MaxDocumentBytes is 2 GiB; it must be from 1 KiB to 1 GiB" },
        { ServerOptions.BlockCacheBytesSetting, "100KiB", "Storage:BlockCacheBytes is 100 KiB" },
        { ServerOptions.SyncWritesSetting, "yes", "Storage:SyncWrites is 'yes'; it must be true or false (default true: every write waits for the log to reach disk)." },
        { ServerOptions.DirectReadsSetting, "on", "Storage:DirectReads is 'on'; it must be true or false (default false: reads go through the OS page cache)." },
    };

    [Theory]
    [MemberData(nameof(BadSettings))]
    public void Bind_BadSetting_MessageNamesTheSettingAndValue(string setting, string value, string expected)
    {
        var configuration = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?> { [setting] = value }).Build();
        var error = Assert.Throws<ServerConfigurationException>(() => ServerOptions.Bind(configuration, "data"));
        Assert.Contains(expected, Assert.Single(error.Problems), StringComparison.Ordinal);
        if (setting == ServerOptions.ApiKeySetting)
        {
            // The key is a secret, even a bad one: the message describes it without echoing it.
            Assert.DoesNotContain(value, error.Message, StringComparison.Ordinal);
        }
    }

    [Fact]
    public void Bind_SizesWithUnitsAndDefaults_Parsed()
    {
        var configuration = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?>
        {
            [ServerOptions.MaxDocumentBytesSetting] = "16MiB",
            [ServerOptions.BlockCacheBytesSetting] = "64 MiB",
            [ServerOptions.SyncWritesSetting] = "false",
        }).Build();

        var options = ServerOptions.Bind(configuration, "data");

        Assert.Equal(16L << 20, options.Store.MaxDocumentBytes);
        Assert.Equal(64L << 20, options.Store.BlockCacheBytes);
        Assert.False(options.Store.SyncWrites);
        Assert.Equal(IPAddress.Loopback, options.Address);
        Assert.Equal(ServerOptions.DefaultPort, options.Port);
        Assert.Null(options.ApiKey);
        Assert.Equal(Path.Combine(Path.GetFullPath("data"), "store"), options.StoreDirectory);
    }
}
