using System.Text;

namespace Indexing.Common.Tests;

public sealed class AtomicFileTests : IDisposable
{
    private readonly string _directory = Path.Combine(Path.GetTempPath(), "indexing-atomic-file-tests", Guid.NewGuid().ToString("N"));

    public AtomicFileTests() => Directory.CreateDirectory(_directory);

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    [Fact]
    public void Replace_WritesTheWholeNewContentAndLeavesNoTemporaryFile()
    {
        var path = Path.Combine(_directory, "state.json");
        File.WriteAllText(path, "old");
        var renamedAfterTempComplete = false;

        AtomicFile.Replace(path, stream => stream.Write("new"u8), beforeRename: () =>
            renamedAfterTempComplete = File.ReadAllText(AtomicFile.TempPath(path)) == "new" && File.ReadAllText(path) == "old");

        Assert.True(renamedAfterTempComplete, "the hook runs with the temporary file complete and the old file still in place");
        Assert.Equal("new", File.ReadAllText(path));
        Assert.False(File.Exists(AtomicFile.TempPath(path)));
    }

    [Fact]
    public void Replace_WriterFails_KeepsTheOldFileAndRemovesTheHalfWrittenOne()
    {
        var path = Path.Combine(_directory, "state.json");
        File.WriteAllText(path, "old");

        Assert.Throws<InvalidOperationException>(() => AtomicFile.Replace(path, stream =>
        {
            stream.Write("half"u8);
            throw new InvalidOperationException("writer failed");
        }));

        Assert.Equal("old", File.ReadAllText(path));
        Assert.False(File.Exists(AtomicFile.TempPath(path)));
    }

    [Fact]
    public void ReplaceByPath_WriterOpeningTheFileItself_ReplacesWhole()
    {
        var path = Path.Combine(_directory, "plot.svg");

        AtomicFile.ReplaceByPath(path, temp => File.WriteAllText(temp, "<svg/>", Encoding.UTF8));

        Assert.Equal("<svg/>", File.ReadAllText(path));
        Assert.False(File.Exists(AtomicFile.TempPath(path)));
    }
}
