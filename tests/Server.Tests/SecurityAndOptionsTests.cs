using System.Net;
using System.Net.Http.Headers;
using Indexing.Server.Hosting;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace Indexing.Server.Tests;

public sealed class SecurityAndOptionsTests
{
    private const string Key = "0123456789abcdef-test-key";
    private const string ReadKey = "fedcba9876543210-read-key";
    private const string ReadableIndex = """{"name": "by-a", "collection": "orders", "fields": [{"name": "a", "path": "a", "type": "long", "sortable": true}]}""";

    // Every kind of request, by the key it needs.
    private static readonly (string Method, string Path)[] Reads =
    [
        ("GET", "/docs/orders/1"), ("GET", "/indexes"), ("GET", "/indexes/by-a"), ("GET", "/indexes/by-a/query?q=*:*&include=docs"),
        ("GET", "/indexes/by-a/rebuild"),
    ];

    private static readonly (string Method, string Path)[] Writes =
    [
        ("PUT", "/docs/orders/2"), ("DELETE", "/docs/orders/1"), ("POST", "/docs/bulk"), ("PUT", "/indexes/by-b"), ("POST", "/indexes/by-a/rebuild"),
        ("DELETE", "/indexes/by-a/rebuild"), ("POST", "/indexes/by-a/verify"),
    ];

    private static readonly (string Method, string Path)[] Admin =
    [
        ("GET", "/admin/prefetch"), ("GET", "/admin/store"), ("GET", "/admin/rebuilds"), ("GET", "/admin/memory"), ("GET", "/metrics"), ("PUT", "/admin/prefetch/limits"),
    ];

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
    public async Task Requests_AnyAddressWithKey_EveryRequestNeedsTheKeyReadsToo()
    {
        await using var server = await RunningServer.StartAsync(new Dictionary<string, string?>
        {
            [ServerOptions.AddressSetting] = "0.0.0.0",
            [ServerOptions.ApiKeySetting] = Key,
        });
        // Kestrel reports 0.0.0.0; talk to it over loopback.
        server.Client.BaseAddress = new UriBuilder(server.Host.BaseAddress) { Host = "127.0.0.1" }.Uri;
        server.Store.Put("orders/1", """{"a": 1}""");

        server.Host.Engine.Indexes.CreateOrUpdate(Indexer.IndexDefinition.Parse(ReadableIndex));
        foreach (var (method, path) in Writes.Concat(Admin).Concat(Reads))
        {
            using var request = new HttpRequestMessage(new HttpMethod(method), path) { Content = Body(method, path) };
            using var response = await server.Client.SendAsync(request);
            Assert.True(HttpStatusCode.Unauthorized == response.StatusCode, $"{method} {path}: {(int)response.StatusCode}");
            var problem = await DocumentEndpointTests.AssertProblem(response, HttpStatusCode.Unauthorized, "needs an API key (Server:ApiKey)");
            Assert.Equal(path.Split('?')[0], problem.GetProperty("detail").GetString()!.Split(' ')[1]);
        }

        using (var wrong = new HttpRequestMessage(HttpMethod.Put, "/docs/orders/2") { Content = RunningServer.Json("{}") })
        {
            wrong.Headers.Add("X-Api-Key", Key + "x");
            using var response = await server.Client.SendAsync(wrong);
            await DocumentEndpointTests.AssertProblem(response, HttpStatusCode.Unauthorized, "is not a configured one (Server:ApiKey)");
        }

        using (var wrongRead = new HttpRequestMessage(HttpMethod.Get, "/docs/orders/1"))
        {
            wrongRead.Headers.Add("X-Api-Key", Key + "x");
            using var response = await server.Client.SendAsync(wrongRead);
            await DocumentEndpointTests.AssertProblem(response, HttpStatusCode.Unauthorized, "is not a configured one (Server:ApiKey)");
        }

        using (var page = await server.Client.GetAsync("/admin"))
        {
            // The admin page without the key is its sign-in form.
            Assert.Equal(HttpStatusCode.Unauthorized, page.StatusCode);
            Assert.Equal("text/html", page.Content.Headers.ContentType?.MediaType);
            Assert.Contains("<form method=\"post\" action=\"/admin/login\">", await page.Content.ReadAsStringAsync(), StringComparison.Ordinal);
        }

        Assert.Equal(1, server.Store.LastEtag);
        Assert.NotNull(server.Store.Get("orders/1"));

        foreach (var (method, path) in Reads)
        {
            using var read = new HttpRequestMessage(new HttpMethod(method), path);
            read.Headers.Add("X-Api-Key", Key);
            using var response = await server.Client.SendAsync(read);
            Assert.True(response.IsSuccessStatusCode || (path.EndsWith("/rebuild", StringComparison.Ordinal) && response.StatusCode == HttpStatusCode.NotFound),
                $"{method} {path} with the key: {(int)response.StatusCode}");
        }

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
    public async Task Requests_ReadKey_OpensReadsOnly_WritesAndAdminAre403NamingTheRule()
    {
        await using var server = await RunningServer.StartAsync(new Dictionary<string, string?>
        {
            [ServerOptions.ApiKeySetting] = Key,
            [ServerOptions.ReadApiKeySetting] = ReadKey,
        });
        server.Store.Put("orders/1", """{"a": 1}""");
        server.Host.Engine.Indexes.CreateOrUpdate(Indexer.IndexDefinition.Parse(ReadableIndex));

        foreach (var (method, path) in Reads)
        {
            using var read = new HttpRequestMessage(new HttpMethod(method), path);
            read.Headers.Authorization = new AuthenticationHeaderValue("Bearer", ReadKey);
            using var response = await server.Client.SendAsync(read);
            Assert.True(response.IsSuccessStatusCode || (path.EndsWith("/rebuild", StringComparison.Ordinal) && response.StatusCode == HttpStatusCode.NotFound),
                $"{method} {path} with the read key: {(int)response.StatusCode}");
        }

        var etag = server.Store.LastEtag;
        foreach (var (method, path) in Writes.Concat(Admin))
        {
            using var request = new HttpRequestMessage(new HttpMethod(method), path) { Content = Body(method, path) };
            request.Headers.Add("X-Api-Key", ReadKey);
            using var response = await server.Client.SendAsync(request);
            var problem = await DocumentEndpointTests.AssertProblem(response, HttpStatusCode.Forbidden, $"{method} {path} was sent with the read-only key (Server:ReadApiKey), which opens only reads");
            Assert.Equal("Read-only API key", problem.GetProperty("title").GetString());
            Assert.Contains("need the full key (Server:ApiKey)", problem.GetProperty("detail").GetString(), StringComparison.Ordinal);
        }

        Assert.Equal(etag, server.Store.LastEtag);
        Assert.NotNull(server.Store.Get("orders/1"));
        using (var anonymous = await server.Client.GetAsync("/docs/orders/1"))
        {
            await DocumentEndpointTests.AssertProblem(anonymous, HttpStatusCode.Unauthorized, "needs an API key (Server:ApiKey, or for reads Server:ReadApiKey)");
        }

        // The admin page's form takes the full key only, and says so when given the read key.
        using (var login = await server.Client.PostAsync("/admin/login", new FormUrlEncodedContent([new("key", ReadKey)])))
        {
            Assert.Equal(HttpStatusCode.Unauthorized, login.StatusCode);
            Assert.Contains("That is the read-only key (Server:ReadApiKey)", await login.Content.ReadAsStringAsync(), StringComparison.Ordinal);
            Assert.False(login.Headers.Contains("Set-Cookie"));
        }

        using var write = new HttpRequestMessage(HttpMethod.Put, "/docs/orders/2") { Content = RunningServer.Json("{}") };
        write.Headers.Add("X-Api-Key", Key);
        using var written = await server.Client.SendAsync(write);
        Assert.Equal(HttpStatusCode.Created, written.StatusCode);
    }

    [Fact]
    public async Task Requests_LoopbackWithoutKeys_EverythingTrusted()
    {
        await using var server = await RunningServer.StartAsync();
        server.Store.Put("orders/1", """{"a": 1}""");
        server.Host.Engine.Indexes.CreateOrUpdate(Indexer.IndexDefinition.Parse(ReadableIndex));

        foreach (var (method, path) in Reads.Append(("GET", "/admin/prefetch")).Append(("GET", "/metrics")).Append(("PUT", "/docs/orders/2")))
        {
            using var request = new HttpRequestMessage(new HttpMethod(method), path) { Content = Body(method, path) };
            using var response = await server.Client.SendAsync(request);
            Assert.True(response.IsSuccessStatusCode || (path.EndsWith("/rebuild", StringComparison.Ordinal) && response.StatusCode == HttpStatusCode.NotFound),
                $"{method} {path} without a key on loopback: {(int)response.StatusCode}");
        }
    }

    [Fact]
    public async Task AdminPage_KeyEnteredInTheForm_SignInCookieIsNotTheKeyAndOpensTheAdminReadsButNeverWrites()
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

        // The key in a URL (logged by proxies, kept in history) opens nothing.
        using (var inUrl = await browser.GetAsync($"/admin?key={Key}"))
        {
            Assert.Equal(HttpStatusCode.Unauthorized, inUrl.StatusCode);
            Assert.False(inUrl.Headers.Contains("Set-Cookie"));
        }

        using (var wrong = await browser.PostAsync("/admin/login", new FormUrlEncodedContent([new("key", "not-the-key-at-all")])))
        {
            Assert.Equal(HttpStatusCode.Unauthorized, wrong.StatusCode);
            Assert.Contains("That is not the server&#39;s key", await wrong.Content.ReadAsStringAsync(), StringComparison.Ordinal);
            Assert.False(wrong.Headers.Contains("Set-Cookie"));
        }

        using (var login = await browser.PostAsync("/admin/login", new FormUrlEncodedContent([new("key", Key)])))
        {
            Assert.Equal(HttpStatusCode.Redirect, login.StatusCode);
            Assert.Equal("/admin", login.Headers.Location?.OriginalString);
            var setCookie = Assert.Single(login.Headers.GetValues("Set-Cookie"));
            Assert.StartsWith("indexing-admin=", setCookie, StringComparison.Ordinal);
            Assert.DoesNotContain(Key, setCookie, StringComparison.Ordinal);
            Assert.DoesNotContain(Uri.EscapeDataString(Key), setCookie, StringComparison.Ordinal);
            Assert.Contains("path=/admin", setCookie, StringComparison.OrdinalIgnoreCase);
            Assert.Contains("samesite=strict", setCookie, StringComparison.OrdinalIgnoreCase);
            Assert.Contains("httponly", setCookie, StringComparison.OrdinalIgnoreCase);
        }

        using (var page = await browser.GetAsync("/admin"))
        {
            Assert.Equal(HttpStatusCode.OK, page.StatusCode);
            Assert.Contains("Prefetch pressure", await page.Content.ReadAsStringAsync(), StringComparison.Ordinal);
        }

        using (var prefetch = await browser.GetAsync("/admin/prefetch"))
        {
            Assert.Equal(HttpStatusCode.OK, prefetch.StatusCode);
        }

        using (var metrics = await browser.GetAsync("/metrics"))
        {
            Assert.Equal(HttpStatusCode.Unauthorized, metrics.StatusCode);
        }

        using (var write = await browser.PutAsync("/admin/prefetch/limits", RunningServer.Json("""{"maxConcurrency": 2}""")))
        {
            Assert.Equal(HttpStatusCode.Unauthorized, write.StatusCode);
        }

        // The cookie of one server is worthless to another: it is a ticket only this server's keys decrypt.
        await using var other = await RunningServer.StartAsync(new Dictionary<string, string?>
        {
            [ServerOptions.AddressSetting] = "0.0.0.0",
            [ServerOptions.ApiKeySetting] = Key,
        });
        var ticket = cookies.GetCookies(new Uri(address, "/admin/prefetch"))["indexing-admin"]!.Value;
        using var replay = new HttpRequestMessage(HttpMethod.Get, new UriBuilder(other.Host.BaseAddress) { Host = "127.0.0.1", Path = "/admin/prefetch" }.Uri);
        replay.Headers.Add("Cookie", "indexing-admin=" + ticket);
        using var replayed = await other.Client.SendAsync(replay);
        Assert.Equal(HttpStatusCode.Unauthorized, replayed.StatusCode);
    }

    [Fact]
    public async Task Logging_RequestLogsDefaultToWarningsAndCanBeTurnedBackOn()
    {
        // As on a machine with no logging configuration: Information for everything.
        await using (var quiet = await RunningServer.StartAsync(new Dictionary<string, string?> { ["Logging:LogLevel:Default"] = "Information" }))
        {
            var loggers = quiet.Host.Services.GetRequiredService<ILoggerFactory>();
            Assert.False(loggers.CreateLogger("Microsoft.AspNetCore.Hosting.Diagnostics").IsEnabled(LogLevel.Information), "per-request logs are on");
            Assert.False(loggers.CreateLogger("Microsoft.AspNetCore.Routing.EndpointMiddleware").IsEnabled(LogLevel.Information), "endpoint logs are on");
            Assert.True(loggers.CreateLogger("Microsoft.AspNetCore.Hosting.Diagnostics").IsEnabled(LogLevel.Warning));
            Assert.True(loggers.CreateLogger("Indexing.Server").IsEnabled(LogLevel.Information), "the server's own information stays on");
        }

        await using var verbose = await RunningServer.StartAsync(new Dictionary<string, string?>
        {
            ["Logging:LogLevel:Default"] = "Information",
            ["Logging:LogLevel:Microsoft.AspNetCore"] = "Information",
        });
        Assert.True(verbose.Host.Services.GetRequiredService<ILoggerFactory>().CreateLogger("Microsoft.AspNetCore.Hosting.Diagnostics").IsEnabled(LogLevel.Information));
    }

    public static TheoryData<string, string, string> BadSettings => new()
    {
        { ServerOptions.PortSetting, "80000", "Server:Port is '80000'; it must be a whole number from 0 to 65535" },
        { ServerOptions.PortSetting, "http", "Server:Port is 'http'" },
        { ServerOptions.AddressSetting, "localhost:80", "Server:Address is 'localhost:80', which is not an IP address" },
        { ServerOptions.ApiKeySetting, "s3cr3t", "Server:ApiKey is 6 characters; it must be at least 16" },
        { ServerOptions.ApiKeySetting, "with whitespace inside it", "contains whitespace" },
        { ServerOptions.ReadApiKeySetting, "r3ad", "Server:ReadApiKey is 4 characters; it must be at least 16" },
        { ServerOptions.ReadApiKeySetting, "read key with whitespace", "Server:ReadApiKey is 24 characters and contains whitespace" },
        { ServerOptions.MaxDocumentBytesSetting, "lots", "Storage:MaxDocumentBytes is 'lots', which is not a size" },
        { ServerOptions.MaxDocumentBytesSetting, "2GiB", "Storage:MaxDocumentBytes is 2 GiB; it must be from 1 KiB to 1 GiB" },
        { ServerOptions.BlockCacheBytesSetting, "100KiB", "Storage:BlockCacheBytes is 100 KiB" },
        { ServerOptions.SyncWritesSetting, "yes", "Storage:SyncWrites is 'yes'; it must be true or false (default true: every write waits for the log to reach disk)." },
        { ServerOptions.DirectReadsSetting, "on", "Storage:DirectReads is 'on'; it must be true or false (default false: reads go through the OS page cache)." },
        { ServerOptions.QueryTimeoutSetting, "soon", "Server:QueryTimeout is 'soon'; it must be a duration from 1 ms to 10 min, written like 10s" },
        { ServerOptions.QueryTimeoutSetting, "0s", "Server:QueryTimeout is '0s'; it must be a duration from 1 ms to 10 min" },
        { ServerOptions.QueryTimeoutSetting, "11min", "Server:QueryTimeout is '11min'" },
        { ServerOptions.MaxConcurrentQueriesSetting, "0", "Server:MaxConcurrentQueries is '0'; it must be a whole number from 1 to 10,000 (queries running at once" },
        { ServerOptions.QueryQueueLengthSetting, "-1", "Server:QueryQueueLength is '-1'; it must be a whole number from 0 to 100,000" },
        { ServerOptions.MaxQueryTermsSetting, "5000", "Server:MaxQueryTerms is '5000'; it must be a whole number from 1 to 1,024" },
        { ServerOptions.MaxSortKeysSetting, "65", "Server:MaxSortKeys is '65'; it must be a whole number from 1 to 64 (sort keys one query may have; default 8)" },
        { ServerOptions.MaxEventStreamsSetting, "many", "Server:MaxEventStreams is 'many'; it must be a whole number from 1 to 100,000" },
        { ServerOptions.MaxConnectionsSetting, "50", "Server:MaxConnections is 50, not above Server:MaxEventStreams (100): every event stream holds a connection" },
        // The engine's validator judges section Indexes, naming each setting by its path in the options tree.
        { ServerOptions.IndexingThreadsSetting, "0", "Indexes:IndexingThreads is 0; it must be from 1 to 16 (threads)." },
        { ServerOptions.IndexingThreadsSetting, "two", "Indexes:IndexingThreads is 'two', which is not a whole number (default 2)." },
        { ServerOptions.IndexingThreadNiceSetting, "20", "Indexes:IndexingThreadNice is 20; it must be from 0 to 19" },
        { ServerOptions.BulkCommitIntervalSetting, "50ms", "Indexes:BulkCommitInterval is 00:00:00.0500000; it must be from 00:00:00.1000000 to 01:00:00." },
        { ServerOptions.BulkCommitIntervalSetting, "later", "Indexes:BulkCommitInterval is 'later', which is not a duration; write it like 10s" },
        { ServerOptions.BulkCommitShareSetting, "5%", "Indexes:BulkCommitShare is '5%', which is not a number; write it like 0.05 (default 0.05)." },
        { ServerOptions.BulkCommitShareSetting, "2", "Indexes:BulkCommitShare is 2; it must be from 0.01 to 1" },
        { ServerOptions.SwapLagEtagsSetting, "-1", "Indexes:SwapLagEtags is -1; it must be 0 or more." },
        { "Rebuilds:DrainTimeout", "5min", "Rebuilds:DrainTimeout is no longer read: section Rebuilds moved into section Indexes (Indexes:SwapLagEtags, Indexes:DrainTimeout); set it there." },
        { ServerOptions.DrainTimeoutSetting, "0s", "Indexes:DrainTimeout is 00:00:00; it must be more than 0 and at most 01:00:00." },
        { ServerOptions.MaxConcurrentRebuildsSetting, "0", "Indexes:MaxConcurrentRebuilds is 0; it must be from 1 to 64 (rebuilds running at once, each holding a build buffer)." },
        { ServerOptions.MaxConcurrentRebuildsSetting, "all", "Indexes:MaxConcurrentRebuilds is 'all', which is not a whole number (default 2)." },
        { ServerOptions.SharedPassWindowSetting, "2min", "Indexes:SharedPassWindow is 00:02:00; it must be from 00:00:00 to 00:01:00." },
        { ServerOptions.SharedPassWindowSetting, "soon", "Indexes:SharedPassWindow is 'soon', which is not a duration; write it like 10s" },
        { ServerOptions.PrefetchBudgetBytesSetting, "512KiB", "Indexes:PrefetchBudgetBytes is 524288; it must be from 1 MiB to 64 GiB." },
        { ServerOptions.PrefetchBudgetBytesSetting, "lots", "Indexes:PrefetchBudgetBytes is 'lots', which is not a size" },
        { ServerOptions.AllowedHostsSetting, "http://localhost", "AllowedHosts is 'http://localhost'; it must be host names separated by ';', without scheme, port or path" },
        { ServerOptions.AllowedHostsSetting, "localhost:5080", "and 'localhost:5080' is not one." },
    };

    [Fact]
    public void Validator_TwoBadSettings_FailsWithBothNamedAsTheServerNamesThem()
    {
        var settings = ServerSettings.From(new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?>
        {
            [ServerOptions.PortSetting] = "http",
            [ServerOptions.BlockCacheBytesSetting] = "100KiB",
        }).Build());

        var result = new ServerSettingsValidator().Validate(name: null, settings);

        Assert.True(result.Failed);
        Assert.Collection(
            result.Failures!,
            problem => Assert.StartsWith("Server:Port is 'http'", problem, StringComparison.Ordinal),
            // Storage's own range check, naming the setting by its path in the engine's options tree.
            problem => Assert.StartsWith("Storage:BlockCacheBytes is 100 KiB; it must be 0 (no block cache) or from 1 MiB to 1 TiB.", problem, StringComparison.Ordinal));
        Assert.True(new ServerSettingsValidator().Validate(name: null, new ServerSettings()).Succeeded);
    }

    [Fact]
    public async Task Start_ValidSettings_HostValidatesTheSameSettingsOnStart()
    {
        await using var server = await RunningServer.StartAsync();

        Assert.Contains(server.Host.Services.GetServices<IValidateOptions<ServerSettings>>(), v => v is ServerSettingsValidator);
        Assert.Equal("false", server.Host.Services.GetRequiredService<IOptions<ServerSettings>>().Value.Storage.SyncWrites);
    }

    [Theory]
    [MemberData(nameof(BadSettings))]
    public void Bind_BadSetting_MessageNamesTheSettingAndValue(string setting, string value, string expected)
    {
        var configuration = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?> { [setting] = value }).Build();
        var error = Assert.Throws<ServerConfigurationException>(() => ServerOptions.Bind(configuration, "data"));
        Assert.Contains(expected, Assert.Single(error.Problems), StringComparison.Ordinal);
        if (setting is ServerOptions.ApiKeySetting or ServerOptions.ReadApiKeySetting)
        {
            // The key is a secret, even a bad one: the message describes it without echoing it.
            Assert.DoesNotContain(value, error.Message, StringComparison.Ordinal);
        }
    }

    [Theory]
    [InlineData(null, "Server:ReadApiKey is set but Server:ApiKey is not: without the full key every request is trusted, so a read-only key would restrict nothing")]
    [InlineData(ReadKey, "Server:ReadApiKey is the same as Server:ApiKey; the read-only key must differ from the full key")]
    public void Bind_ReadKeyWithoutOrEqualToTheFullKey_Refused(string? apiKey, string expected)
    {
        var configuration = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?>
        {
            [ServerOptions.ApiKeySetting] = apiKey,
            [ServerOptions.ReadApiKeySetting] = ReadKey,
        }).Build();

        var error = Assert.Throws<ServerConfigurationException>(() => ServerOptions.Bind(configuration, "data"));

        Assert.StartsWith(expected, Assert.Single(error.Problems), StringComparison.Ordinal);
        Assert.DoesNotContain(ReadKey, error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Bind_BothKeys_EffectiveConfigSaysSetWithoutTheirValues_AndTheGuardNamesTheReadKey()
    {
        var configuration = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?>
        {
            [ServerOptions.AddressSetting] = "0.0.0.0",
            [ServerOptions.ApiKeySetting] = Key,
            [ServerOptions.ReadApiKeySetting] = ReadKey,
        }).Build();

        var options = ServerOptions.Bind(configuration, "data");

        Assert.Equal(ReadKey, options.ReadApiKey);
        Assert.Contains("api key set, read api key set,", options.ToString(), StringComparison.Ordinal);
        Assert.DoesNotContain(Key, options.ToString(), StringComparison.Ordinal);
        Assert.DoesNotContain(ReadKey, options.ToString(), StringComparison.Ordinal);
        Assert.Contains("api key not set, read api key not set,", ServerOptions.Bind(new ConfigurationBuilder().Build(), "data").ToString(), StringComparison.Ordinal);

        var readOnly = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?>
        {
            [ServerOptions.AddressSetting] = "0.0.0.0",
            [ServerOptions.ReadApiKeySetting] = ReadKey,
        }).Build();
        var error = Assert.Throws<ServerConfigurationException>(() => ServerOptions.Bind(readOnly, "data"));
        Assert.Contains("Server:ApiKey is not set (Server:ReadApiKey is set, but opens reads only beside a full key); refusing to serve", error.Message, StringComparison.Ordinal);
        Assert.Equal(2, error.Problems.Count);
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
        Assert.Equal(ServerOptions.LoopbackHosts, options.AllowedHosts);
        Assert.Equal(new HttpLimits(TimeSpan.FromSeconds(10), 2 * Environment.ProcessorCount, 32, 1024, 8, 100, 1000), options.Limits);
        Assert.Equal(new Indexer.IndexOptions(), options.Indexes);
    }

    [Fact]
    public void Bind_BulkCommitCadence_ParsedIntoTheIndexOptions()
    {
        var configuration = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?>
        {
            [ServerOptions.BulkCommitIntervalSetting] = "30s",
            [ServerOptions.BulkCommitShareSetting] = " 0.02 ",
        }).Build();

        var indexes = ServerOptions.Bind(configuration, "data").Indexes;

        Assert.Equal(TimeSpan.FromSeconds(30), indexes.BulkCommitInterval);
        Assert.Equal(0.02, indexes.BulkCommitShare);
    }

    [Fact]
    public void Bind_RebuildSettings_ParsedIntoTheEnginesIndexOptions()
    {
        var configuration = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?>
        {
            [ServerOptions.SwapLagEtagsSetting] = "250",
            [ServerOptions.DrainTimeoutSetting] = "2min",
            [ServerOptions.MaxConcurrentRebuildsSetting] = "3",
            [ServerOptions.SharedPassWindowSetting] = "0s",
            [ServerOptions.PrefetchBudgetBytesSetting] = "1GiB",
        }).Build();

        var engine = ServerOptions.Bind(configuration, "data").Engine;

        Assert.Equal(1L << 30, engine.Indexes.PrefetchBudgetBytes);
        Assert.Equal(Indexing.Indexer.IndexOptions.DefaultPrefetchBudgetBytes, ServerOptions.Bind(new ConfigurationBuilder().Build(), "data").Indexes.PrefetchBudgetBytes);
        Assert.Equal(250, engine.Indexes.SwapLagEtags);
        Assert.Equal(TimeSpan.FromMinutes(2), engine.Indexes.DrainTimeout);
        Assert.Equal(3, engine.Indexes.MaxConcurrentRebuilds);
        Assert.Equal(TimeSpan.Zero, engine.Indexes.SharedPassWindow);
        Assert.Equal(Indexing.Indexer.IndexOptions.DefaultMaxConcurrentRebuilds, ServerOptions.Bind(new ConfigurationBuilder().Build(), "data").Indexes.MaxConcurrentRebuilds);
        Assert.Equal(Path.GetFullPath("data"), engine.DataDirectory);
    }

    [Theory]
    [InlineData("250ms", 250)]
    [InlineData("1.5s", 1500)]
    [InlineData("2 min", 120_000)]
    [InlineData("00:00:03", 3000)]
    public void Bind_QueryTimeoutWithUnits_Parsed(string text, int milliseconds)
    {
        var configuration = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?> { [ServerOptions.QueryTimeoutSetting] = text }).Build();
        Assert.Equal(TimeSpan.FromMilliseconds(milliseconds), ServerOptions.Bind(configuration, "data").Limits.QueryTimeout);
    }

    [Fact]
    public void Bind_AnyAddress_AnswersEveryHostNameUnlessAllowedHostsSaysOtherwise()
    {
        var any = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?>
        {
            [ServerOptions.AddressSetting] = "0.0.0.0",
            [ServerOptions.ApiKeySetting] = Key,
        }).Build();
        Assert.Equal(["*"], ServerOptions.Bind(any, "data").AllowedHosts);

        var named = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?>
        {
            [ServerOptions.AddressSetting] = "0.0.0.0",
            [ServerOptions.ApiKeySetting] = Key,
            [ServerOptions.AllowedHostsSetting] = "search.example.com; *.internal.example",
        }).Build();
        Assert.Equal(["search.example.com", "*.internal.example"], ServerOptions.Bind(named, "data").AllowedHosts);
    }

    private static HttpContent? Body(string method, string path) => method switch
    {
        "PUT" when path.StartsWith("/indexes/", StringComparison.Ordinal) =>
            RunningServer.Json("""{"name": "by-b", "collection": "orders", "fields": [{"name": "a", "path": "a", "type": "long"}]}"""),
        "PUT" when path.StartsWith("/admin/", StringComparison.Ordinal) => RunningServer.Json("""{"maxConcurrency": 2}"""),
        "PUT" => RunningServer.Json("""{"a": 2}"""),
        "POST" when path == "/docs/bulk" => new StringContent("""{"id": "orders/3", "doc": {}}""" + "\n", System.Text.Encoding.UTF8, "application/x-ndjson"),
        _ => null,
    };
}
