namespace Indexing.Measurement.Measure;

/// <summary>
/// The measure command's scratch directory, claimed for one run. It only ever deletes what it
/// made: the <c>store</c> and <c>indexes</c> subdirectories and its marker file, and the directory
/// itself only when this run created it and it is empty again. A directory that is not empty and
/// has no marker is someone else's and is refused; one holding the input or an output file is
/// refused too. The marker is held open with an exclusive lock for the whole run, so a second
/// measure on the same directory is refused instead of deleting the first one's store.
/// </summary>
internal sealed class MeasureWorkDirectory : IDisposable
{
    /// <summary>The marker: a directory holding it was made by measure, and may be cleared by it.</summary>
    public const string MarkerName = ".indexing-measure";

    private readonly FileStream _lock;
    private readonly bool _created;

    private MeasureWorkDirectory(string path, FileStream lockStream, bool created)
    {
        Path = path;
        _lock = lockStream;
        _created = created;
    }

    public string Path { get; }

    public string StorePath => System.IO.Path.Combine(Path, "store");

    public string IndexesPath => System.IO.Path.Combine(Path, "indexes");

    private string MarkerPath => System.IO.Path.Combine(Path, MarkerName);

    /// <summary>Claims <paramref name="directory"/>, clearing what an earlier measure left there.</summary>
    /// <param name="files">Files the run reads or writes, by the option that names them; none may be inside the directory.</param>
    /// <exception cref="MeasureException">The directory is someone else's, in use by another measure, or holds one of the files.</exception>
    public static MeasureWorkDirectory Claim(string directory, IEnumerable<(string Option, string Path)> files)
    {
        var path = System.IO.Path.GetFullPath(directory);
        foreach (var (option, file) in files)
        {
            if (IsInside(System.IO.Path.GetFullPath(file), path))
            {
                throw new MeasureException(
                    $"{option} {file} is inside the work directory {path}, whose contents measure deletes; choose a --work directory apart from the input and the outputs.");
            }
        }

        var existed = Directory.Exists(path);
        var marker = System.IO.Path.Combine(path, MarkerName);
        if (existed && !File.Exists(marker) && Directory.EnumerateFileSystemEntries(path).Any())
        {
            throw new MeasureException(
                $"work directory {path} is not empty and was not made by measure (it has no {MarkerName} file), so it is left alone; " +
                "name an empty or new directory with --work.");
        }

        Directory.CreateDirectory(path);
        FileStream lockStream;
        try
        {
            // FileShare.None is an exclusive lock (flock on Unix) while the stream is open.
            lockStream = new FileStream(marker, FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.None);
        }
        catch (IOException e)
        {
            throw new MeasureException($"work directory {path} is in use by another measure run ({e.Message}); wait for it, or name another directory with --work.");
        }

        var claimed = new MeasureWorkDirectory(path, lockStream, created: !existed);
        try
        {
            lockStream.SetLength(0);
            lockStream.Write("Work directory of `indexing measure`: its store and indexes are deleted by the next run.\n"u8);
            lockStream.Flush();
            DeleteIfPresent(claimed.StorePath);
            DeleteIfPresent(claimed.IndexesPath);
            return claimed;
        }
        catch
        {
            claimed.Dispose();
            throw;
        }
    }

    /// <summary>
    /// Deletes the indexes, and the store unless it is to be kept (then the marker stays, so the next
    /// run may clear it); removes the directory when this run created it and nothing else is in it.
    /// </summary>
    /// <returns>Whether the store was kept.</returns>
    public bool Release(bool keepStore)
    {
        DeleteIfPresent(IndexesPath);
        if (keepStore && Directory.Exists(StorePath))
        {
            _lock.Dispose();
            return true;
        }

        DeleteIfPresent(StorePath);
        _lock.Dispose();
        File.Delete(MarkerPath);
        if (_created && !Directory.EnumerateFileSystemEntries(Path).Any())
        {
            Directory.Delete(Path);
        }

        return false;
    }

    public void Dispose() => _lock.Dispose();

    private static bool IsInside(string file, string directory)
    {
        var relative = System.IO.Path.GetRelativePath(directory, file);
        return relative != ".." && !relative.StartsWith(".." + System.IO.Path.DirectorySeparatorChar, StringComparison.Ordinal) && !System.IO.Path.IsPathRooted(relative);
    }

    private static void DeleteIfPresent(string directory)
    {
        if (Directory.Exists(directory))
        {
            Directory.Delete(directory, recursive: true);
        }
    }
}
