using System.Runtime.InteropServices;

namespace Indexing;

/// <summary>
/// Replaces a file whole: the content goes to <c>path.tmp</c>, is flushed to disk, renamed over
/// <c>path</c>, and the directory is fsynced, so a crash leaves the old file or the new one, never
/// neither and never a mix. A <c>.tmp</c> file found later is an abandoned replacement; readers
/// ignore it. The index catalog, the demo's dataset marker and the measure command's results use it.
/// </summary>
public static class AtomicFile
{
    /// <summary>Writes <paramref name="path"/> through <paramref name="write"/>, which gets the temporary file's stream.</summary>
    /// <param name="beforeRename">Called once the temporary file is complete, just before the rename (a test hook of the catalog's).</param>
    public static void Replace(string path, Action<Stream> write, Action? beforeRename = null)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        ArgumentNullException.ThrowIfNull(write);
        var temp = TempPath(path);
        try
        {
            using var stream = new FileStream(temp, FileMode.Create, FileAccess.Write, FileShare.None);
            write(stream);
            stream.Flush(flushToDisk: true);
        }
        catch
        {
            File.Delete(temp); // a half-written replacement is nobody's
            throw;
        }

        beforeRename?.Invoke();
        Commit(temp, path);
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

        Commit(temp, path);
    }

    /// <summary>The temporary file a replacement of <paramref name="path"/> writes first.</summary>
    public static string TempPath(string path) => path + ".tmp";

    private static void Commit(string temp, string path)
    {
        File.Move(temp, path, overwrite: true);
        FsyncDirectory(Path.GetDirectoryName(Path.GetFullPath(path))!);
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
