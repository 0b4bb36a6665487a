using System.Runtime.InteropServices;

namespace Indexing;

// POSIX calls AtomicFile needs and .NET does not expose (fsync of a directory).
internal static partial class NativeFiles
{
    [LibraryImport("libc", EntryPoint = "open", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    internal static partial int Open(string path, int flags);

    [LibraryImport("libc", EntryPoint = "fsync", SetLastError = true)]
    internal static partial int Fsync(int fd);

    [LibraryImport("libc", EntryPoint = "close", SetLastError = true)]
    internal static partial int Close(int fd);
}
