using System.Runtime.InteropServices;

namespace Indexing;

/// <summary>
/// Replaces a file whole: the content goes to <c>path.tmp</c>, is flushed to disk, renamed over
/// <c>path</c>, and the directory is fsynced, so a crash leaves the old file or the new one, never
/// neither and never a mix. A <c>.tmp</c> file found later is an abandoned replacement; readers
/// ignore it. The index catalog, the demo's dataset marker and the measure command's results use it.
/// </summary>
/// <remarks>
/// A failure before the rename leaves the old file (and no temporary one). A failure of the
/// directory fsync after the rename throws <see cref="FileReplacedNotDurableException"/>: the new
/// file is the one every reader sees, but a power loss could still bring the old one back.
/// </remarks>
internal static class AtomicFile
{
    /// <summary>Writes <paramref name="path"/> through <paramref name="write"/>, which gets the temporary file's stream.</summary>
    /// <param name="beforeStep">Called before each step with the step and the path it touches (a test seam: the catalog's fault sweep counts and fails steps here; a throw is that step's failure).</param>
    /// <exception cref="FileReplacedNotDurableException">The file was replaced, but its rename could not be made durable.</exception>
    public static void Replace(string path, Action<Stream> write, Action<AtomicFileStep, string>? beforeStep = null)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        ArgumentNullException.ThrowIfNull(write);
        var temp = TempPath(path);
        try
        {
            using var stream = new FileStream(temp, FileMode.Create, FileAccess.Write, FileShare.None);
            beforeStep?.Invoke(AtomicFileStep.Write, temp);
            write(stream);
            beforeStep?.Invoke(AtomicFileStep.Flush, temp);
            stream.Flush(flushToDisk: true);
        }
        catch
        {
            File.Delete(temp); // a half-written replacement is nobody's
            throw;
        }

        Commit(temp, path, beforeStep);
    }

    /// <summary>Writes <paramref name="path"/> through <paramref name="writeFile"/>, which gets the temporary file's path (for writers that open files themselves).</summary>
    public static void ReplaceByPath(string path, Action<string> writeFile)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        ArgumentNullException.ThrowIfNull(writeFile);
        var temp = TempPath(path);
        try
        {
            writeFile(temp);
            using var stream = new FileStream(temp, FileMode.Open, FileAccess.ReadWrite, FileShare.None);
            stream.Flush(flushToDisk: true);
        }
        catch
        {
            File.Delete(temp);
            throw;
        }

        Commit(temp, path, beforeStep: null);
    }

    /// <summary>The temporary file a replacement of <paramref name="path"/> writes first.</summary>
    public static string TempPath(string path) => path + ".tmp";

    /// <summary>
    /// Makes the renames in the directory holding <paramref name="path"/> durable (fsync of the
    /// directory): after a <see cref="FileReplacedNotDurableException"/>, this succeeding means the
    /// replacement is durable after all.
    /// </summary>
    /// <exception cref="IOException">The fsync failed.</exception>
    public static void SyncDirectoryOf(string path) => FsyncDirectory(Path.GetDirectoryName(Path.GetFullPath(path))!);

    private static void Commit(string temp, string path, Action<AtomicFileStep, string>? beforeStep)
    {
        try
        {
            beforeStep?.Invoke(AtomicFileStep.Rename, path);
            File.Move(temp, path, overwrite: true);
        }
        catch
        {
            File.Delete(temp);
            throw;
        }

        try
        {
            beforeStep?.Invoke(AtomicFileStep.SyncDirectory, path);
            SyncDirectoryOf(path);
        }
        catch (IOException exception)
        {
            throw new FileReplacedNotDurableException(path, exception);
        }
    }

    // A rename is durable only once its directory entry is: fsync the directory (POSIX). There is
    // no managed API for it; on other systems the rename alone is what we have.
    private static void FsyncDirectory(string directory)
    {
        if (!OperatingSystem.IsLinux() && !OperatingSystem.IsMacOS())
        {
            return;
        }

        var fd = NativeFiles.Open(directory, 0 /* O_RDONLY */);
        if (fd < 0)
        {
            throw new IOException($"could not open {MessageText.Quote(directory)} to fsync a file's rename (errno {Marshal.GetLastPInvokeError()}).");
        }

        try
        {
            if (NativeFiles.Fsync(fd) != 0)
            {
                throw new IOException($"fsync of {MessageText.Quote(directory)} failed (errno {Marshal.GetLastPInvokeError()}): the file's replacement may not survive a power loss.");
            }
        }
        finally
        {
            _ = NativeFiles.Close(fd);
        }
    }
}

/// <summary>A step of <see cref="AtomicFile.Replace"/>, in order.</summary>
internal enum AtomicFileStep
{
    /// <summary>The content is written to the temporary file.</summary>
    Write,

    /// <summary>The temporary file is flushed to disk (fsync).</summary>
    Flush,

    /// <summary>The temporary file is renamed over the file.</summary>
    Rename,

    /// <summary>The directory is fsynced, so that the rename survives a power loss.</summary>
    SyncDirectory,
}

/// <summary>
/// <see cref="AtomicFile"/> renamed the new file into place, but could not make the rename durable
/// (the directory's fsync failed): readers see the new file now; a power loss could bring the old
/// one back. Whoever relies on the replacement surviving (deleting what the old file named) must
/// make it durable first (<see cref="AtomicFile.SyncDirectoryOf"/>).
/// </summary>
internal sealed class FileReplacedNotDurableException : IOException
{
    /// <summary>Creates the exception for <paramref name="path"/>, with the fsync's failure.</summary>
    public FileReplacedNotDurableException(string path, Exception inner)
        : base($"{MessageText.QuotePath(path)} was replaced, but the rename could not be made durable ({inner.Message}): it may not survive a power loss", inner)
    {
        Path = path;
    }

    /// <summary>The replaced file.</summary>
    public string Path { get; }
}
