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

        var steps = new List<AtomicFileStep>();

        AtomicFile.Replace(path, stream => stream.Write("new"u8), beforeStep: (step, _) =>
        {
            steps.Add(step);
            if (step == AtomicFileStep.Rename)
            {
                renamedAfterTempComplete = File.ReadAllText(AtomicFile.TempPath(path)) == "new" && File.ReadAllText(path) == "old";
            }
        });

        Assert.True(renamedAfterTempComplete, "the rename step comes with the temporary file complete and the old file still in place");
        Assert.Equal([AtomicFileStep.Write, AtomicFileStep.Flush, AtomicFileStep.Rename, AtomicFileStep.SyncDirectory], steps);
        Assert.Equal("new", File.ReadAllText(path));
        Assert.False(File.Exists(AtomicFile.TempPath(path)));
    }

    [Theory]
    [InlineData(nameof(AtomicFileStep.Write))]
    [InlineData(nameof(AtomicFileStep.Flush))]
    [InlineData(nameof(AtomicFileStep.Rename))]
    public void Replace_AStepBeforeTheRenameFails_KeepsTheOldFileAndNoTemporaryOne(string step)
    {
        // By name: the step type is internal to the engine, and a test method's parameters must be public.
        var failing = Enum.Parse<AtomicFileStep>(step);
        var path = Path.Combine(_directory, "state.json");
        File.WriteAllText(path, "old");

        var failure = Assert.Throws<IOException>(() => AtomicFile.Replace(path, stream => stream.Write("new"u8), beforeStep: (step, _) =>
        {
            if (step == failing)
            {
                throw new IOException("injected: no space left on device");
            }
        }));

        Assert.IsNotType<FileReplacedNotDurableException>(failure);
        Assert.Equal("old", File.ReadAllText(path));
        Assert.False(File.Exists(AtomicFile.TempPath(path)));
    }

    [Fact]
    public void Replace_TheDirectoryFsyncFails_SaysTheFileWasReplacedButIsNotDurable()
    {
        var path = Path.Combine(_directory, "state.json");
        File.WriteAllText(path, "old");

        var failure = Assert.Throws<FileReplacedNotDurableException>(() => AtomicFile.Replace(path, stream => stream.Write("new"u8), beforeStep: (step, _) =>
        {
            if (step == AtomicFileStep.SyncDirectory)
            {
                throw new IOException("injected: input/output error");
            }
        }));

        Assert.Equal(path, failure.Path);
        Assert.Contains("may not survive a power loss", failure.Message, StringComparison.Ordinal);
        Assert.Equal("new", File.ReadAllText(path));
        Assert.False(File.Exists(AtomicFile.TempPath(path)));
        AtomicFile.SyncDirectoryOf(path); // durable after all once an fsync succeeds
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
