namespace Indexing.Testing;

/// <summary>The repository a test runs from: found by walking up from the test's output folder to Indexing.sln.</summary>
public static class RepositoryFiles
{
    /// <summary>The repository's root folder; throws when the tests do not run inside a clone.</summary>
    public static string Root()
    {
        var directory = new DirectoryInfo(AppContext.BaseDirectory);
        while (directory is not null && !File.Exists(Path.Combine(directory.FullName, "Indexing.sln")))
        {
            directory = directory.Parent;
        }

        return directory?.FullName
            ?? throw new InvalidOperationException($"no Indexing.sln above '{AppContext.BaseDirectory}': the tests must run inside a clone of the repository");
    }

    /// <summary>A path inside the repository, from its root.</summary>
    public static string Combine(params string[] parts) => Path.Combine([Root(), .. parts]);
}
