using System.Diagnostics;
using System.Globalization;

namespace Indexing.Testing;

/// <summary>
/// A small volume for one test: a tmpfs of a given size mounted on a fresh temp directory, so a
/// store on it fills for real (ENOSPC). Mounting needs root, which the tests have here and in CI.
/// Dispose unmounts (lazily if something still holds a file open) and deletes the directory; dispose
/// the store first.
/// </summary>
public sealed class TmpfsVolume : IDisposable
{
    // Null when the mount point belongs to someone else (MountAt): dispose leaves the directory.
    private readonly TempDirectory? _directory;
    private int _disposed;

    /// <summary>Mounts a tmpfs of <paramref name="sizeBytes"/> on a new directory under <paramref name="purpose"/>.</summary>
    public TmpfsVolume(string purpose, long sizeBytes)
        : this(new TempDirectory(purpose, create: true), null, sizeBytes)
    {
    }

    private TmpfsVolume(TempDirectory? directory, string? path, long sizeBytes)
    {
        _directory = directory;
        Path = directory?.Path ?? path!;
        try
        {
            Run("mount", "-t", "tmpfs", "-o", Size(sizeBytes), "tmpfs", Path);
        }
        catch
        {
            _directory?.Dispose();
            throw;
        }
    }

    public string Path { get; }

    /// <summary>
    /// Mounts a tmpfs of <paramref name="sizeBytes"/> on <paramref name="path"/> (created if missing),
    /// e.g. a server's store directory inside its data directory; dispose unmounts and leaves the directory.
    /// </summary>
    public static TmpfsVolume MountAt(string path, long sizeBytes)
    {
        Directory.CreateDirectory(path);
        return new TmpfsVolume(null, path, sizeBytes);
    }

    /// <summary>A path inside the volume.</summary>
    public string Combine(string relative) => System.IO.Path.Combine(Path, relative);

    /// <summary>Grows (or shrinks) the volume in place; what it holds stays, open files too.</summary>
    public void Resize(long sizeBytes) => Run("mount", "-o", "remount," + Size(sizeBytes), Path);

    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        try
        {
            Run("umount", Path);
        }
        catch (InvalidOperationException)
        {
            // Still busy (a test failed with a file open): detach it now, the kernel frees it when closed.
            Run("umount", "-l", Path);
        }

        _directory?.Dispose();
    }

    private static string Size(long bytes) => string.Create(CultureInfo.InvariantCulture, $"size={bytes}");

    private static void Run(string file, params string[] arguments)
    {
        var start = new ProcessStartInfo(file) { RedirectStandardError = true, RedirectStandardOutput = true };
        foreach (var argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        using var process = Process.Start(start) ?? throw new InvalidOperationException($"could not start {file}");
        var error = process.StandardError.ReadToEndAsync();
        process.StandardOutput.ReadToEnd();
        if (!process.WaitForExit(TimeSpan.FromSeconds(30)))
        {
            process.Kill();
            throw new InvalidOperationException($"{file} {string.Join(' ', arguments)} did not finish in 30 s.");
        }

        if (process.ExitCode != 0)
        {
            throw new InvalidOperationException(
                $"{file} {string.Join(' ', arguments)} exited with {process.ExitCode}: {error.Result.Trim()} " +
                "(tests of a full volume mount a tmpfs, which needs root).");
        }
    }
}
