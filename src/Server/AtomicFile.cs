namespace Indexing.Server;

/// <summary>
/// Replaces a file whole: the content goes to a temporary file next to it, is flushed to disk, and
/// is renamed over the target, so a reader (or a crash) sees the old file or the new one, never
/// half of one. For the demo's dataset marker and the measure command's results.
/// </summary>
internal static class AtomicFile
{
    /// <summary>Writes <paramref name="path"/> through <paramref name="write"/>, which gets the temporary file's stream.</summary>
    public static void Replace(string path, Action<Stream> write)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        var temp = TempPath(path);
        try
        {
            using (var stream = new FileStream(temp, FileMode.Create, FileAccess.Write, FileShare.None))
            {
                write(stream);
                stream.Flush(flushToDisk: true);
            }

            File.Move(temp, path, overwrite: true);
        }
        finally
        {
            File.Delete(temp); // gone after the move; only left by a failed write
        }
    }

    /// <summary>Writes <paramref name="path"/> through <paramref name="writeFile"/>, which gets the temporary file's path (for writers that open files themselves).</summary>
    public static void ReplaceByPath(string path, Action<string> writeFile)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        var temp = TempPath(path);
        try
        {
            writeFile(temp);
            using (var stream = new FileStream(temp, FileMode.Open, FileAccess.ReadWrite, FileShare.None))
            {
                stream.Flush(flushToDisk: true);
            }

            File.Move(temp, path, overwrite: true);
        }
        finally
        {
            File.Delete(temp);
        }
    }

    /// <summary>Whether <paramref name="path"/> can be replaced: its directory exists (created if missing), it is not a directory, and a file can be created next to it.</summary>
    /// <exception cref="IOException">It cannot, with the reason.</exception>
    /// <exception cref="UnauthorizedAccessException">The directory is not writable.</exception>
    public static void CheckWritable(string path)
    {
        if (Directory.Exists(path))
        {
            throw new IOException($"{path} is a directory; name a file.");
        }

        Directory.CreateDirectory(Path.GetDirectoryName(Path.GetFullPath(path))!);
        var temp = TempPath(path);
        using (new FileStream(temp, FileMode.Create, FileAccess.Write, FileShare.None))
        {
        }

        File.Delete(temp);
    }

    private static string TempPath(string path) => path + ".tmp";
}
