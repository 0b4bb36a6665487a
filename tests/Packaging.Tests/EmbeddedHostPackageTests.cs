using System.IO.Compression;
using System.Security.Cryptography;
using System.Text.RegularExpressions;
using System.Xml.Linq;

namespace Indexing.Packaging.Tests;

/// <summary>
/// The package as a host gets it: `dotnet pack src/Engine` into a folder feed, samples/EmbeddedHost
/// built against that feed (not against the project) and run. Everything happens in a folder of the
/// test's own: a copy of samples/ beside artifacts/packages (the layout the sample's nuget.config
/// expects), the engine's build output, and a private NuGet packages folder, so neither the
/// repository's bin/obj nor a cached package of the same version is ever used.
/// </summary>
[Trait("Category", "Packaging")]
public sealed partial class EmbeddedHostPackageTests : IDisposable
{
    private static readonly TimeSpan _buildTimeout = TimeSpan.FromMinutes(5);
    private static readonly TimeSpan _runTimeout = TimeSpan.FromMinutes(3);
    private readonly TempDirectory _work = new("indexing-packaging-tests", create: true);

    [Fact]
    public async Task PackedEngine_EmbeddedHostSampleBuiltFromAFolderFeed_RunsEveryCheckAndExitsZero()
    {
        var root = RepositoryFiles.Root();
        CopyDirectory(Path.Combine(root, "samples"), _work.Combine("samples"));
        var feed = _work.Combine(Path.Combine("artifacts", "packages"));
        var noEnvironment = new Dictionary<string, string>();

        // Pack, with the engine's build output in the test's folder (--artifacts-path), not the repository's bin/obj.
        var pack = await DotnetCommand.RunAsync(
            root, _buildTimeout, noEnvironment,
            "pack", "src/Engine", "-c", "Release", "-o", feed, "--artifacts-path", _work.Combine("engine-build"), "--disable-build-servers");
        Assert.True(pack.ExitCode == 0, $"dotnet pack src/Engine failed ({pack.ExitCode}):\n{pack.Output}");

        var version = ProjectVersion(Path.Combine(root, "src", "Engine", "Indexing.Engine.csproj"));
        var package = Path.Combine(feed, $"Indexing.Engine.{version}.nupkg");
        Assert.True(File.Exists(package), $"no {Path.GetFileName(package)} in the feed: {string.Join(", ", Directory.GetFiles(feed).Select(Path.GetFileName))}");
        var pinned = SamplePinnedVersion(_work.Combine(Path.Combine("samples", "EmbeddedHost", "EmbeddedHost.csproj")));
        Assert.True(pinned == version, $"samples/EmbeddedHost pins Indexing.Engine {pinned} but src/Engine packs {version}: change the sample's PackageReference with the version");
        AssertPackageContents(package, root, version);

        // Build the sample as an outside project: restore from the feed and nuget.org into a private packages folder.
        var packages = _work.Combine("nuget-packages");
        var privatePackages = new Dictionary<string, string> { ["NUGET_PACKAGES"] = packages };
        var sample = _work.Combine(Path.Combine("samples", "EmbeddedHost"));
        var build = await DotnetCommand.RunAsync(sample, _buildTimeout, privatePackages, "build", "-c", "Release", "--disable-build-servers");
        Assert.True(build.ExitCode == 0, $"dotnet build samples/EmbeddedHost failed ({build.ExitCode}):\n{build.Output}");

        // The restored package is the one just packed, byte for byte.
        var restored = Path.Combine(packages, "indexing.engine", version, $"indexing.engine.{version}.nupkg");
        Assert.True(File.Exists(restored), $"the sample did not restore Indexing.Engine {version} into {packages}");
        Assert.Equal(Convert.ToHexString(SHA512.HashData(File.ReadAllBytes(package))), Convert.ToHexString(SHA512.HashData(File.ReadAllBytes(restored))));

        var run = await DotnetCommand.RunAsync(
            sample, _runTimeout, privatePackages, Path.Combine("bin", "Release", "net10.0", "EmbeddedHost.dll"), _work.Combine("data"));
        Assert.True(run.ExitCode == 0, $"the sample exited {run.ExitCode}:\n{run.Output}");
        var lines = run.Output.Split('\n', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries);
        Assert.Contains("loaded 400 orders", lines);
        Assert.Contains(lines, l => l.StartsWith("built orders-by-status: Bulk", StringComparison.Ordinal) && l.EndsWith("-> Swapping -> Done", StringComparison.Ordinal));
        Assert.Contains(lines, l => l.StartsWith("rebuilt orders-by-status: Bulk", StringComparison.Ordinal) && l.EndsWith("-> Swapping -> Done", StringComparison.Ordinal));
        Assert.Contains(lines, l => l.StartsWith("swapped to generation 2 (definition changed)", StringComparison.Ordinal));

        // The counts include the writer's orders: at least 20 before the change and 20 after the swap.
        var shipped = Assert.Single(lines, l => l.StartsWith("query status:shipped: ", StringComparison.Ordinal));
        var counted = QueryLine().Match(shipped);
        Assert.True(counted.Success && long.Parse(counted.Groups["orders"].Value, System.Globalization.CultureInfo.InvariantCulture) >= 440, shipped);
        Assert.Contains(lines, l => l.StartsWith("query status:shipped AND total:[500 TO *]: ", StringComparison.Ordinal) && l.EndsWith("largest first, as expected", StringComparison.Ordinal));
        Assert.Equal(["deleted orders-by-status", "closed the engine", "ok: every check held"], lines[^3..]);
    }

    public void Dispose() => _work.Dispose();

    // The package holds the assembly and the readme, declares the licence, and depends on exactly the
    // engine's package references at their central versions; its symbols package holds the pdb.
    private static void AssertPackageContents(string package, string root, string version)
    {
        using (var archive = ZipFile.OpenRead(package))
        {
            var files = archive.Entries.Select(e => e.FullName).ToHashSet();
            Assert.Contains("lib/net10.0/Indexing.Engine.dll", files);
            Assert.Contains("README.md", files);

            using var nuspecStream = archive.Entries.Single(e => e.FullName == "Indexing.Engine.nuspec").Open();
            var metadata = XDocument.Load(nuspecStream).Root!.Elements().Single(e => e.Name.LocalName == "metadata");
            string? Value(string name) => metadata.Elements().SingleOrDefault(e => e.Name.LocalName == name)?.Value;
            Assert.Equal("Indexing.Engine", Value("id"));
            Assert.Equal(version, Value("version"));
            Assert.Equal("README.md", Value("readme"));
            Assert.False(string.IsNullOrWhiteSpace(Value("license")));
            Assert.False(string.IsNullOrWhiteSpace(Value("description")));
            Assert.Null(Value("repository"));
            var dependencies = metadata.Descendants().Where(e => e.Name.LocalName == "dependency")
                .Select(e => $"{e.Attribute("id")!.Value} {e.Attribute("version")!.Value}").Order(StringComparer.Ordinal);
            Assert.Equal(EngineDependencies(root), dependencies);
        }

        var symbols = Path.ChangeExtension(package, ".snupkg");
        Assert.True(File.Exists(symbols), $"no symbols package {Path.GetFileName(symbols)}");
        using var symbolArchive = ZipFile.OpenRead(symbols);
        Assert.Contains(symbolArchive.Entries, e => e.FullName == "lib/net10.0/Indexing.Engine.pdb");
    }

    // "Id Version" of each PackageReference of the engine's project, its version from Directory.Packages.props.
    private static IEnumerable<string> EngineDependencies(string root)
    {
        var central = XDocument.Load(Path.Combine(root, "Directory.Packages.props")).Descendants("PackageVersion")
            .ToDictionary(e => e.Attribute("Include")!.Value, e => e.Attribute("Version")!.Value, StringComparer.OrdinalIgnoreCase);
        return XDocument.Load(Path.Combine(root, "src", "Engine", "Indexing.Engine.csproj")).Descendants("PackageReference")
            .Where(e => e.Attribute("PrivateAssets")?.Value is not "all")
            .Select(e => e.Attribute("Include")!.Value)
            .Select(id => $"{id} {central[id]}")
            .Order(StringComparer.Ordinal)
            .ToList();
    }

    private static string ProjectVersion(string project) =>
        XDocument.Load(project).Descendants("Version").Single().Value;

    private static string SamplePinnedVersion(string project) =>
        XDocument.Load(project).Descendants("PackageReference").Single(e => e.Attribute("Include")?.Value == "Indexing.Engine").Attribute("Version")!.Value;

    // The sample's sources only: a bin/ or obj/ left by a build in the repository is not copied.
    private static void CopyDirectory(string from, string to)
    {
        Directory.CreateDirectory(to);
        foreach (var file in Directory.GetFiles(from))
        {
            File.Copy(file, Path.Combine(to, Path.GetFileName(file)));
        }

        foreach (var directory in Directory.GetDirectories(from).Where(d => Path.GetFileName(d) is not ("bin" or "obj")))
        {
            CopyDirectory(directory, Path.Combine(to, Path.GetFileName(directory)));
        }
    }

    [GeneratedRegex(@": \d+ hits of (?<orders>\d+) orders")]
    private static partial Regex QueryLine();
}
