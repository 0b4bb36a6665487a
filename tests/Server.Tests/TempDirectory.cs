namespace Indexing.Server.Tests;

/// <summary>
/// A fresh path under the system temp directory for one test (not created: the program under test
/// makes it), deleted on dispose as best effort: a leftover temp directory must not fail the test.
/// </summary>
internal sealed class TempDirectory(string purpose) : IDisposable
{
    public string Path { get; } = System.IO.Path.Combine(System.IO.Path.GetTempPath(), purpose, Guid.NewGuid().ToString("N"));

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
