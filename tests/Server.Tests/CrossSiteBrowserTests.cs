using System.Text.Json.Nodes;
using Indexing.Server.Hosting;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace Indexing.Server.Tests;

/// <summary>
/// What a real browser (Debian's headless Chromium) does: a page from another origin on the same
/// machine cannot store documents through the loopback server, by form or by fetch; and an operator
/// signs in to the admin page of a server with a key through its form, and the page streams.
/// </summary>
public sealed class CrossSiteBrowserTests
{
    private const string Key = "0123456789abcdef-test-key";

    [Fact]
    public async Task PageOfAnotherOrigin_FormPostAndNoCorsFetchToBulk_StoreNothing()
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(90));
        await using var server = await RunningServer.StartAsync();
        var target = new Uri(server.Host.BaseAddress, "/docs/bulk");
        // A text/plain form sends "name=value": together, one NDJSON line of the bulk format.
        var page = $$$"""
            <!doctype html><body>
            <form id="f" method="post" action="{{{target}}}" enctype="text/plain">
              <input name='{"id": "orders/evil-form", "doc": {"a": "' value='"}}'>
            </form>
            </body>
            """;
        await using var hostile = await HostilePage.StartAsync(page, timeout.Token);
        await using var browser = await HeadlessChromium.StartAsync(800, 600, timeout.Token);
        await browser.SendAsync("Page.navigate", new JsonObject { ["url"] = hostile.Address.ToString() }, timeout.Token);
        while ((string?)await browser.EvaluateAsync("document.getElementById('f') ? 'ready' : 'loading'", timeout.Token) != "ready")
        {
            await Task.Delay(50, timeout.Token);
        }

        // No Content-Type and no preflight: a "simple" request any page may send.
        var fetched = await browser.EvaluateAsync(
            $$$"""fetch("{{{target}}}", { method: "POST", mode: "no-cors", body: new Blob(['{"id": "orders/evil-fetch", "doc": {"a": 1}}\n']) }).then(r => r.type)""",
            timeout.Token);
        Assert.Equal("opaque", (string?)fetched);

        await browser.EvaluateAsync("document.getElementById('f').submit()", timeout.Token);
        string? answer;
        do
        {
            await Task.Delay(50, timeout.Token);
            answer = (string?)await browser.EvaluateAsync($"location.href === '{target}' && document.readyState === 'complete' ? document.body.innerText : null", timeout.Token);
        }
        while (answer is null);

        // The browser sent the form (it shows the server's answer), and the server refused it.
        Assert.Contains("Cross-site request refused", answer, StringComparison.Ordinal);
        Assert.Null(server.Store.Get("orders/evil-form"));
        Assert.Null(server.Store.Get("orders/evil-fetch"));
        Assert.Equal(0, server.Store.LastEtag);
    }

    [Fact]
    public async Task AdminPageWithKey_OperatorSignsInThroughTheForm_PageStreams()
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(90));
        await using var server = await RunningServer.StartAsync(new Dictionary<string, string?>
        {
            [ServerOptions.AddressSetting] = "0.0.0.0",
            [ServerOptions.ApiKeySetting] = Key,
        });
        var admin = new UriBuilder(server.Host.BaseAddress) { Host = "127.0.0.1", Path = "/admin" }.Uri;
        await using var browser = await HeadlessChromium.StartAsync(800, 600, timeout.Token);
        await browser.SendAsync("Page.navigate", new JsonObject { ["url"] = admin.ToString() }, timeout.Token);
        while ((string?)await browser.EvaluateAsync("document.getElementById('key') ? 'form' : 'loading'", timeout.Token) != "form")
        {
            await Task.Delay(50, timeout.Token);
        }

        await browser.EvaluateAsync($"document.getElementById('key').value = '{Key}'; document.forms[0].submit()", timeout.Token);

        // The admin page, with its event stream authorised by the sign-in cookie alone.
        while ((int?)await browser.EvaluateAsync("document.body && document.body.dataset.snapshots ? Number(document.body.dataset.snapshots) : 0", timeout.Token) < 2)
        {
            await Task.Delay(100, timeout.Token);
        }

        Assert.Equal(admin.ToString(), (string?)await browser.EvaluateAsync("location.href", timeout.Token));
        Assert.Equal("live", (string?)await browser.EvaluateAsync("document.getElementById('connection').textContent", timeout.Token));
        // The key is nowhere the page's scripts could read it.
        Assert.DoesNotContain(Key, (string?)await browser.EvaluateAsync("document.cookie + location.href + document.documentElement.outerHTML", timeout.Token) ?? string.Empty, StringComparison.Ordinal);
    }

    // A page served from another origin (another port of 127.0.0.1), as any site open in the browser would be.
    private sealed class HostilePage : IAsyncDisposable
    {
        private readonly WebApplication _app;

        private HostilePage(WebApplication app, Uri address)
        {
            _app = app;
            Address = address;
        }

        public Uri Address { get; }

        public static async Task<HostilePage> StartAsync(string html, CancellationToken cancellationToken)
        {
            var builder = WebApplication.CreateSlimBuilder();
            builder.WebHost.ConfigureKestrel(kestrel => kestrel.Listen(System.Net.IPAddress.Loopback, 0));
            builder.Logging.ClearProviders();
            var app = builder.Build();
            app.MapGet("/", () => Results.Content(html, "text/html; charset=utf-8"));
            await app.StartAsync(cancellationToken);
            var address = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First();
            return new HostilePage(app, new Uri(address + "/"));
        }

        public async ValueTask DisposeAsync() => await _app.DisposeAsync();
    }
}
