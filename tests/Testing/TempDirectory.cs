namespace Indexing.Testing;

/// <summary>
/// A fresh path under the system temp directory for one test, <c>&lt;temp&gt;/&lt;purpose&gt;/&lt;guid&gt;</c>,
/// created only when asked (a program under test may make it itself), deleted on dispose as best
/// effort: a leftover temp directory must not fail the test that made it.
/// </summary>
public sealed class TempDirectory : IDisposable
{
    /// <summary>A new path under <paramref name="purpose"/> (a folder name that says which tests made it).</summary>
    public TempDirectory(string purpose, bool create = false)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(purpose);
        Path = System.IO.Path.Combine(System.IO.Path.GetTempPath(), purpose, Guid.NewGuid().ToString("N"));
        if (create)
        {
            Directory.CreateDirectory(Path);
        }
    }

    public string Path { get; }

    /// <summary>A path inside this directory.</summary>
    public string Combine(string relative) => System.IO.Path.Combine(Path, relative);

    public void Dispose()
    {
        try
        {
            Directory.Delete(Path, recursive: true);
        }
        catch (IOException)
        {
            // Never created (DirectoryNotFoundException is an IOException), or busy: best effort.
        }
    }
}
